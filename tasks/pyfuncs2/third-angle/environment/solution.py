def third_angle(a, b):
    """The angles of a triangle add up to 180 degrees. Return the third angle of a triangle
    whose other two angles are `a` and `b` degrees.
    """
    raise NotImplementedError
