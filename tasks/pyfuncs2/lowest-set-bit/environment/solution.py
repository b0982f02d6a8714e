def lowest_set_bit(n):
    """Return the position (0 is the least significant bit) of the lowest 1 bit of the non-
    negative integer `n`, or `-1` when `n` is 0.
    """
    raise NotImplementedError
