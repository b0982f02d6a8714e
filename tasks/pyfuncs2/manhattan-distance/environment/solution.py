def manhattan_distance(p, q):
    """`p` and `q` are points `[x, y]`. Return `|x1 - x2| + |y1 - y2|`.
    """
    raise NotImplementedError
