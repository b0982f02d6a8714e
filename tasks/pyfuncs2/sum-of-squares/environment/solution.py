def sum_of_squares(n):
    """Return `1*1 + 2*2 + ... + n*n` for the non-negative integer `n`.
    """
    raise NotImplementedError
