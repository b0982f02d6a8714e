def count_greater_than_previous(xs):
    """Return how many items of the list `xs` are strictly greater than the item just before
    them.
    """
    raise NotImplementedError
