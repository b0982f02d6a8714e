def total_price(items):
    """`items` is a list of dicts with the keys `'price'` and `'qty'` (integers). Return the
    total cost: the sum of `price * qty` over all items (0 for an empty list).
    """
    raise NotImplementedError
