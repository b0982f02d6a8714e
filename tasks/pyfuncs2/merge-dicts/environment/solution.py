def merge_dicts(a, b):
    """Return a new dict holding every entry of the dicts `a` and `b`; when a key is in
    both, the value from `b` wins.
    """
    raise NotImplementedError
