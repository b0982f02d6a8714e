def absolute(n):
    """Return the absolute value of the number `n`.
    """
    raise NotImplementedError
