def angle_type(deg):
    """Classify the angle `deg` (in degrees, 0 < `deg` <= 180): return `'acute'` below 90,
    `'right'` for exactly 90, `'obtuse'` above 90 and below 180, and `'straight'` for
    exactly 180.
    """
    raise NotImplementedError
