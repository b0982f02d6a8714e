def midpoint_2d(x1, y1, x2, y2):
    """Return the midpoint of the line segment from point (`x1`, `y1`) to point (`x2`, `y2`)
    as a list `[x, y]` of floats (each coordinate is the mean of the two).
    """
    raise NotImplementedError
