def apply_stock_changes(stock, changes):
    """`stock` is a dict of item counts and `changes` a list of `[item, delta]` pairs (delta
    may be negative). Return a new dict with every change applied in order (a missing item
    starts at 0); items whose count ends at 0 or below are left out.
    """
    raise NotImplementedError
