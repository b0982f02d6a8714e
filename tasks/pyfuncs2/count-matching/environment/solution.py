def count_matching(a, b):
    """Return at how many positions `i` the sequences `a` and `b` hold equal items,
    comparing only up to the length of the shorter one.
    """
    raise NotImplementedError
