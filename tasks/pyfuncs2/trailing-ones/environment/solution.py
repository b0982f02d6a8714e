def trailing_ones(n):
    """Return how many consecutive 1 bits the non-negative integer `n` ends with in binary
    (7 = 0b111 gives 3, 11 = 0b1011 gives 2, an even number gives 0).
    """
    raise NotImplementedError
