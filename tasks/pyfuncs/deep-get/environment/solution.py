def deep_get(data, path, default=None):
    """Follow the dot-separated keys of `path` (like 'a.b.c') through nested dicts starting at
    `data` and return the value found. Return `default` when a key is missing or a value on
    the way is not a dict.
    """
    raise NotImplementedError
