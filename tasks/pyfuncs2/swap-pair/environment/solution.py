def swap_pair(pair):
    """`pair` is a list of two items. Return a new list with the two items in the opposite
    order.
    """
    raise NotImplementedError
