def last_digit(n):
    """Return the last decimal digit of the integer `n`; for a negative `n`, the last digit
    of its absolute value.
    """
    raise NotImplementedError
