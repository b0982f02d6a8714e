def interval_union_length(intervals):
    """`intervals` holds `[start, end]` pairs with `start <= end`. Return the total length
    of the number line they cover together (overlaps counted once).
    """
    raise NotImplementedError
