def sort_desc(xs):
    """Return a new list with the numbers of `xs` from largest to smallest.
    """
    raise NotImplementedError
