def binary_gap(n):
    """A binary gap of the positive integer `n` is a run of 0 bits with a 1 bit on both
    sides in its binary form. Return the length of the longest one, or 0 if there is none (9
    = 0b1001 gives 2; 32 = 0b100000 gives 0, its zeros have no 1 after them).
    """
    raise NotImplementedError
