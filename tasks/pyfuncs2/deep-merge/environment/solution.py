def deep_merge(a, b):
    """Return a new dict merging `b` into `a`: where both hold dicts under the same key,
    merge those recursively; otherwise `b`'s value wins. Neither input may be changed.
    """
    raise NotImplementedError
