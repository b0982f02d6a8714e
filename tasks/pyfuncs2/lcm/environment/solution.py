def lcm(a, b):
    """Return the least common multiple of the positive integers `a` and `b`.
    """
    raise NotImplementedError
