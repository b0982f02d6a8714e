def unique(items):
    """Return a list of the items of `items` without duplicates, keeping the first occurrence
    of each and the original order.
    """
    raise NotImplementedError
