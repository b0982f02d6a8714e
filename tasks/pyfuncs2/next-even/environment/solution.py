def next_even(n):
    """Return the smallest even integer that is strictly greater than the integer `n` (so 4
    gives 6 and 5 gives 6).
    """
    raise NotImplementedError
