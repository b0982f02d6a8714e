def is_rotation(a, b):
    """Return `True` if the string `b` can be made by moving some characters from the start
    of `a` to its end (`'llohe'` is a rotation of `'hello'`); strings of different lengths
    never are; every string is a rotation of itself.
    """
    raise NotImplementedError
