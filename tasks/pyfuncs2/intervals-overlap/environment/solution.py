def intervals_overlap(a, b):
    """`a` and `b` are closed intervals `[start, end]` with `start <= end`. Return `True` if
    they share at least one point (touching ends, like `[1, 3]` and `[3, 5]`, do), else
    `False`.
    """
    raise NotImplementedError
