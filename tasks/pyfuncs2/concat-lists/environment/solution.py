def concat_lists(a, b):
    """Return one new list with all the items of the list `a` followed by all the items of
    the list `b`.
    """
    raise NotImplementedError
