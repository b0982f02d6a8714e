def common_to_all(groups):
    """`groups` is a list of lists. Return the sorted list of the distinct values that occur
    in every one of the inner lists; an empty `groups` gives an empty list.
    """
    raise NotImplementedError
