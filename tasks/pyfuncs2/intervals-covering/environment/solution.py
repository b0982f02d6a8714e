def intervals_covering(intervals, x):
    """`intervals` is a list of closed intervals `[start, end]` (`start <= end`). Return how
    many of them contain the number `x`, ends included.
    """
    raise NotImplementedError
