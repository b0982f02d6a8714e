def invert(d):
    """Given a dict `d` whose values are unique strings, return a new dict mapping each value
    back to its key.
    """
    raise NotImplementedError
