def in_both(a, b, item):
    """Return `True` if `item` occurs in the list `a` and also in the list `b`, else
    `False`.
    """
    raise NotImplementedError
