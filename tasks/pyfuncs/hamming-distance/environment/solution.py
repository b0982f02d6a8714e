def hamming(a, b):
    """Return the number of positions at which the strings `a` and `b` differ. Return `None`
    when their lengths differ.
    """
    raise NotImplementedError
