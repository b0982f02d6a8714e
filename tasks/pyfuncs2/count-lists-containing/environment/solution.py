def count_lists_containing(groups, item):
    """`groups` is a list of lists. Return how many of the inner lists contain `item` at
    least once (a list holding it twice counts once).
    """
    raise NotImplementedError
