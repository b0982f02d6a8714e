def max_subarray_sum(xs):
    """Return the largest sum of a non-empty contiguous stretch of the non-empty number list
    `xs` (so all-negative lists give their largest item).
    """
    raise NotImplementedError
