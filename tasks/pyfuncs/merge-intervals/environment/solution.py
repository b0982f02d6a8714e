def merge_intervals(intervals):
    """`intervals` is a list of [start, end] pairs (start <= end), in any order. Merge every
    pair that overlaps or touches (e.g. [1, 3] and [3, 5]) and return the merged intervals
    as [start, end] lists sorted by start.
    """
    raise NotImplementedError
