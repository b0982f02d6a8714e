def keys_by_value(d):
    """Return a dict mapping each value of the dict `d` (values are strings) to the sorted
    list of keys that hold it.
    """
    raise NotImplementedError
