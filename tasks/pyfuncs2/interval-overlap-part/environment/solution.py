def interval_overlap_part(a, b):
    """`a` and `b` are closed intervals `[start, end]` with `start <= end`. Return the
    interval of the points they share, `[start, end]` (a single point when they only touch),
    or `None` when they share none.
    """
    raise NotImplementedError
