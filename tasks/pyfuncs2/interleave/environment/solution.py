def interleave(a, b):
    """Return the items of the lists `a` and `b` taken alternately, starting with `a`; when
    one runs out, the rest of the other follows.
    """
    raise NotImplementedError
