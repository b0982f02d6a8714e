def triangle_area(base, height):
    """Return the area of a triangle with base `base` and height `height` (half of base
    times height), as a float.
    """
    raise NotImplementedError
