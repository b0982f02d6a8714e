def is_divisible(n, d):
    """Return `True` if the integer `n` is divisible by the non-zero integer `d` with no
    remainder.
    """
    raise NotImplementedError
