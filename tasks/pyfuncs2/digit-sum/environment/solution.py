def digit_sum(n):
    """Return the sum of the decimal digits of the non-negative integer `n` (`0` gives 0).
    """
    raise NotImplementedError
