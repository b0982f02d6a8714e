def is_empty_list(xs):
    """Return `True` if the list `xs` has no elements, else `False`.
    """
    raise NotImplementedError
