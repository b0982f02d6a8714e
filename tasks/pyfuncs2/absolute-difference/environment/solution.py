def absolute_difference(a, b):
    """Return the distance between the numbers `a` and `b` on the number line (never
    negative).
    """
    raise NotImplementedError
