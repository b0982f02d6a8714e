def common_sorted(a, b):
    """Return the sorted list of the distinct values that occur in both lists `a` and `b`.
    """
    raise NotImplementedError
