def interval_intersections(a, b):
    """`a` and `b` are lists of closed intervals `[start, end]`, each list sorted and with
    no two of its own intervals touching or overlapping. Return, sorted by start, every non-
    empty intersection of an interval of `a` with an interval of `b` (a single shared point
    gives `[p, p]`).
    """
    raise NotImplementedError
