def nth_item(xs, i):
    """Return the item of the list `xs` at the zero-based index `i`, or `None` when `i` is
    not a valid index (negative indexes are not valid).
    """
    raise NotImplementedError
