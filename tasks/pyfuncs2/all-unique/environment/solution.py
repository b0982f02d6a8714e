def all_unique(xs):
    """Return `True` if no value occurs twice in the list `xs`.
    """
    raise NotImplementedError
