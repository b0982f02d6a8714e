def first_common_item(a, b):
    """Return the first item of the list `a` that also occurs in the list `b`, or `None`
    when the lists share no item.
    """
    raise NotImplementedError
