def select_by_mask(xs, mask):
    """`xs` and `mask` are lists of the same length, `mask` of booleans. Return the items of
    `xs` whose position holds `True` in `mask`, in order.
    """
    raise NotImplementedError
