def has_equal_neighbours(xs):
    """Return `True` if some two neighbouring items of the list `xs` are equal (`xs[i] ==
    xs[i + 1]`), else `False` (also for lists of fewer than two items).
    """
    raise NotImplementedError
