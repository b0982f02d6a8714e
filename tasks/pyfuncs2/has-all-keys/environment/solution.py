def has_all_keys(record, required):
    """Return `True` if the dict `record` has every string of the list `required` as a key
    (values do not matter, even `None`), else `False`; an empty `required` is always met.
    """
    raise NotImplementedError
