def nearest_multiple(n, m):
    """Return the multiple of the positive integer `m` nearest to the integer `n`; when two
    are equally near, the larger one.
    """
    raise NotImplementedError
