def positions_of(xs, item):
    """Return the list of every zero-based index at which `item` occurs in the list `xs`, in
    increasing order (an empty list when it does not occur).
    """
    raise NotImplementedError
