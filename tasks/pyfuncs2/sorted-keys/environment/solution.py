def sorted_keys(d):
    """Return a list of the keys of the dict `d` in sorted order.
    """
    raise NotImplementedError
