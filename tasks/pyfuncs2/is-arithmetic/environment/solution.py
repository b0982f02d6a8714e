def is_arithmetic(xs):
    """Return `True` if every difference between neighbouring numbers of the list `xs` is
    the same (`xs[1] - xs[0] == xs[2] - xs[1] == ...`), else `False`; a list of fewer than
    three numbers is always evenly spaced.
    """
    raise NotImplementedError
