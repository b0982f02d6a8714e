def hypotenuse(a, b):
    """Return the length of the hypotenuse of a right triangle whose other two sides are `a`
    and `b`.
    """
    raise NotImplementedError
