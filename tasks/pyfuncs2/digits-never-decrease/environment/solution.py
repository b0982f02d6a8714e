def digits_never_decrease(n):
    """Return True if reading the decimal digits of the non-negative integer `n` from left
    to right, no digit is smaller than the one before it (1123 and 5 qualify, 132 does not).
    """
    raise NotImplementedError
