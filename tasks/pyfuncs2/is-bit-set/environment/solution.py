def is_bit_set(n, i):
    """Return `True` if bit number `i` (0 is the least significant) of the non-negative
    integer `n` is 1.
    """
    raise NotImplementedError
