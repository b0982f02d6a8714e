def is_happy_number(n):
    """Return True if the positive integer `n` is happy: repeatedly replacing the number by
    the sum of the squares of its decimal digits eventually reaches 1 (19 -> 82 -> 68 -> 100
    -> 1). An unhappy number falls into a cycle that never reaches 1 (such as 4 -> 16 -> 37
    -> ... -> 4).
    """
    raise NotImplementedError
