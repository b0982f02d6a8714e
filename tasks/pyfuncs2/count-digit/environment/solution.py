def count_digit(n, d):
    """Return how many times the digit `d` (0-9) appears in the decimal form of the non-
    negative integer `n`.
    """
    raise NotImplementedError
