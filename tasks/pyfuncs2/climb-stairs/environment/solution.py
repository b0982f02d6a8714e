def climb_stairs(n):
    """Return in how many ways one can climb a staircase of `n` steps taking 1 or 2 steps at
    a time (1 way for `n` = 0).
    """
    raise NotImplementedError
