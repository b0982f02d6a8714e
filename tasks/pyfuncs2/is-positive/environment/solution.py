def is_positive(x):
    """Return `True` if `x` is greater than zero, else `False` (zero is not positive).
    """
    raise NotImplementedError
