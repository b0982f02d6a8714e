def union_size(a, b):
    """Return how many different values occur in the list `a`, the list `b`, or both, each
    value counted once (0 when both are empty).
    """
    raise NotImplementedError
