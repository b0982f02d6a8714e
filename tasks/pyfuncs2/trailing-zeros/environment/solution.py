def trailing_zeros(n):
    """Return how many zeros the decimal form of the positive integer `n` ends with (`1200`
    gives 2, `7` gives 0).
    """
    raise NotImplementedError
