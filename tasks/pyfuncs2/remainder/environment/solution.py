def remainder(a, b):
    """Return the remainder of dividing the integer `a` by the non-zero integer `b`, as
    Python's `%` gives it.
    """
    raise NotImplementedError
