def power_of_three(n):
    """Return `True` if the integer `n` equals `3 ** k` for some integer `k` >= 0.
    """
    raise NotImplementedError
