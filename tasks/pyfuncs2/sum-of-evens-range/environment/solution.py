def sum_of_evens_range(n):
    """Return the sum of the even integers from 0 to `n` inclusive, for a non-negative
    integer `n`.
    """
    raise NotImplementedError
