def all_positive(xs):
    """Return `True` if every number in the list `xs` is greater than zero (`True` for an
    empty list).
    """
    raise NotImplementedError
