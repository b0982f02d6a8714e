def fewest_removals(intervals):
    """`intervals` is a list of `[start, end]` with `start < end`; two intervals clash when
    one starts before the other ends (touching, like `[1, 2]` and `[2, 3]`, is fine). Return
    the fewest intervals to remove so that no two of the rest clash.
    """
    raise NotImplementedError
