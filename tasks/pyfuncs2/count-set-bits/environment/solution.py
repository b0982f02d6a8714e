def count_set_bits(n):
    """Return how many 1 digits the binary form of the non-negative integer `n` has (0 for
    `n` = 0).
    """
    raise NotImplementedError
