def contains(xs, item):
    """Return `True` if `item` is an element of the list `xs`, else `False`.
    """
    raise NotImplementedError
