def join_list_dicts(a, b):
    """`a` and `b` are dicts whose values are lists. Return a new dict with every key of
    either; a key in both maps to `a`'s list followed by `b`'s list. Neither input is
    changed.
    """
    raise NotImplementedError
