def missing_ranges(nums, lo, hi):
    """`nums` is a sorted list of distinct integers, all between `lo` and `hi` (inclusive).
    Return the integers of `lo..hi` that are not in `nums`, grouped as `[start, end]` ranges
    of consecutive missing numbers, in order (a single missing number is `[n, n]`).
    """
    raise NotImplementedError
