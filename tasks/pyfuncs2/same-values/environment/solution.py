def same_values(a, b):
    """Return `True` if the lists `a` and `b` contain exactly the same values, ignoring
    order and how often each value appears.
    """
    raise NotImplementedError
