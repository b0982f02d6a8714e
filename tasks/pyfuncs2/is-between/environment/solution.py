def is_between(x, lo, hi):
    """Return `True` if `x` lies between `lo` and `hi`, both bounds included.
    """
    raise NotImplementedError
