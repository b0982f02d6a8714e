def is_armstrong(n):
    """Return `True` if the non-negative integer `n` equals the sum of its digits each
    raised to the power of the number of digits (153 = 1^3 + 5^3 + 3^3).
    """
    raise NotImplementedError
