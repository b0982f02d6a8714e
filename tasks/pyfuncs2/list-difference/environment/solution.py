def list_difference(a, b):
    """Return the items of the list `a` that do not occur in the list `b`, in their order in
    `a` (duplicates in `a` are kept).
    """
    raise NotImplementedError
