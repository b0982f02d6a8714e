def is_perfect_square(n):
    """Return `True` if the integer `n` is the square of an integer (0 and 1 are; negative
    numbers are not).
    """
    raise NotImplementedError
