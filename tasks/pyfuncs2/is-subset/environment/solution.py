def is_subset(a, b):
    """Return `True` if every value of the list `a` also occurs in the list `b` (how often
    does not matter; an empty `a` always does), else `False`.
    """
    raise NotImplementedError
