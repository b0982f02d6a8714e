def heads_of_lists(groups):
    """`groups` is a list of lists. Return the first item of each inner list, in order;
    empty inner lists are skipped.
    """
    raise NotImplementedError
