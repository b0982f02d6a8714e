def has_key(d, key):
    """Return `True` if the dict `d` has the key `key`, else `False`.
    """
    raise NotImplementedError
