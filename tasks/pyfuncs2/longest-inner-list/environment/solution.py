def longest_inner_list(groups):
    """`groups` is a list of lists. Return the length of its longest inner list, or 0 when
    `groups` is empty.
    """
    raise NotImplementedError
