def is_even(n):
    """Return `True` if the integer `n` is even and `False` otherwise (a bool, not 0/1).
    """
    raise NotImplementedError
