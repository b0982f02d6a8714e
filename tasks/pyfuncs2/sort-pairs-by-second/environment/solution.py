def sort_pairs_by_second(pairs):
    """`pairs` is a list of two-item lists. Return them sorted by their second item,
    smallest first; pairs with equal second items keep their original order.
    """
    raise NotImplementedError
