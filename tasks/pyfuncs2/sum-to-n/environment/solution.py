def sum_to_n(n):
    """Return the sum of the integers from 1 to `n` inclusive (0 when `n` is 0).
    """
    raise NotImplementedError
