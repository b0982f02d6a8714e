def is_power_of_two(n):
    """Return `True` if the integer `n` is a power of two (1, 2, 4, 8, ...), else `False`. Zero
    and negative numbers are not powers of two.
    """
    raise NotImplementedError
