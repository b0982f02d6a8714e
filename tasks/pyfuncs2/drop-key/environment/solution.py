def drop_key(d, key):
    """Return a new dict with every entry of the dict `d` except the one under `key`; when
    `d` has no such key, return an equal copy of `d`. The input dict is not changed.
    """
    raise NotImplementedError
