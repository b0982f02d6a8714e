def rename_key(d, old, new):
    """Return a new dict like `d` but with the key `old` renamed to `new` (keeping its
    value); `new` is never already a key of `d`. If `old` is not in `d`, return an unchanged
    copy of `d`.
    """
    raise NotImplementedError
