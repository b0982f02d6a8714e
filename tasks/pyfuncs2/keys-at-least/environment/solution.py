def keys_at_least(d, threshold):
    """Return the sorted list of keys of the dict `d` whose value is at least `threshold`.
    """
    raise NotImplementedError
