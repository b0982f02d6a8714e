def square(n):
    """Return `n` multiplied by itself.
    """
    raise NotImplementedError
