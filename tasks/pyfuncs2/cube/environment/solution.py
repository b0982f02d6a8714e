def cube(n):
    """Return `n` raised to the third power.
    """
    raise NotImplementedError
