def in_at_least_two(groups):
    """`groups` is a list of lists. Return the sorted list of the distinct values that occur
    in at least two different inner lists (a value repeated inside one list only does not
    count).
    """
    raise NotImplementedError
