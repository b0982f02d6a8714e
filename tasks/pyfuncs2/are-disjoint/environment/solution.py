def are_disjoint(a, b):
    """Return `True` if the lists `a` and `b` share no value at all (two empty lists share
    none), else `False`.
    """
    raise NotImplementedError
