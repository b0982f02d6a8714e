def min_of_three(a, b, c):
    """Return the smallest of the three numbers `a`, `b` and `c`.
    """
    raise NotImplementedError
