def consecutive_ranges(nums):
    """`nums` is a sorted list of distinct integers. Return its runs of consecutive integers
    as `[first, last]` pairs, in order; a number with no neighbour forms `[n, n]`.
    """
    raise NotImplementedError
