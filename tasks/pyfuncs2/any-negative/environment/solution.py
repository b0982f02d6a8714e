def any_negative(xs):
    """Return `True` if at least one number in the list `xs` is below zero.
    """
    raise NotImplementedError
