def count_bits(n):
    """Return the number of 1 bits in the binary form of the non-negative integer `n`.
    """
    raise NotImplementedError
