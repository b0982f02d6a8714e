def distance_2d(p, q):
    """`p` and `q` are points given as lists `[x, y]`. Return the straight-line distance
    between them as a float.
    """
    raise NotImplementedError
