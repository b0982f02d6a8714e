def clamp(x, lo, hi):
    """Return the number `x` forced into the range from `lo` to `hi` (`lo` <= `hi`): `lo`
    when `x` is smaller than `lo`, `hi` when `x` is larger than `hi`, otherwise `x` itself.
    """
    raise NotImplementedError
