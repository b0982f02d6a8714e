def last_element(items):
    """Return the last element of the list `items`. Return `None` when the list is empty.
    """
    raise NotImplementedError
