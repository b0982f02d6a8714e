def unzip_pairs(pairs):
    """`pairs` is a list of two-item lists. Return `[firsts, seconds]`: the list of their
    first items and the list of their second items, in order (`[[], []]` for no pairs).
    """
    raise NotImplementedError
