def in_exactly_one(a, b):
    """Return, ascending and without repeats, every value that one of the lists `a` and `b`
    holds while the other does not.
    """
    raise NotImplementedError
