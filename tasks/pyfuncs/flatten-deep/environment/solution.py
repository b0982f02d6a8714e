def flatten_deep(items):
    """Return a flat list of every non-list element of `items`, where `items` may contain lists
    nested to any depth; keep the left-to-right order.
    """
    raise NotImplementedError
