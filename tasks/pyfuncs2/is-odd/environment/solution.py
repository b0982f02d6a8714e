def is_odd(n):
    """Return `True` if the integer `n` is odd, else `False`.
    """
    raise NotImplementedError
