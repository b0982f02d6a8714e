def dict_get_or_zero(d, key):
    """Return the value stored under `key` in the dict `d`, or `0` when the key is missing.
    """
    raise NotImplementedError
