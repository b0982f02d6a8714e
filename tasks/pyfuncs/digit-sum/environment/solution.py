def digit_sum(n):
    """Return the sum of the decimal digits of the integer `n`. For a negative `n` use its
    absolute value.
    """
    raise NotImplementedError
