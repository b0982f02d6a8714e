def sorted_items(d):
    """Return the items of the dict `d` as a list of `[key, value]` lists, sorted by key.
    """
    raise NotImplementedError
