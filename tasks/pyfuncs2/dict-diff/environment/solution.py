def dict_diff(old, new):
    """Compare the dicts `old` and `new`. Return `{'added': [...], 'removed': [...],
    'changed': [...]}`: sorted lists of the keys only in `new`, only in `old`, and in both
    with different values.
    """
    raise NotImplementedError
