def clamp_list(xs, lo, hi):
    """Return a new list where every number of `xs` below `lo` is replaced by `lo` and every
    number above `hi` by `hi` (`lo` <= `hi`); the others stay.
    """
    raise NotImplementedError
