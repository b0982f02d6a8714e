def polygon_area(points):
    """`points` lists the corners `[x, y]` of a simple polygon in order (either direction).
    Return its area as a non-negative float (shoelace formula); 0.0 for fewer than three
    points.
    """
    raise NotImplementedError
