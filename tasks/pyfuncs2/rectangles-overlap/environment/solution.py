def rectangles_overlap(a, b):
    """Each rectangle is `[x1, y1, x2, y2]` with `x1 < x2` and `y1 < y2`. Return `True` if
    the rectangles `a` and `b` share an area larger than zero (touching edges do not count).
    """
    raise NotImplementedError
