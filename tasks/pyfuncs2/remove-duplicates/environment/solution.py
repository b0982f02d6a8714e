def remove_duplicates(xs):
    """Return a new list with the items of `xs` where each value appears only once, at its
    first position.
    """
    raise NotImplementedError
