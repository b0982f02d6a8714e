def merge_shared_groups(groups):
    """`groups` is a list of lists of strings. Two groups belong together when they share a
    member, directly or through a chain of groups. Merge every set of groups that belong
    together and return the merged groups, each as a sorted list without repeats, the groups
    ordered by their first member; empty inner lists are ignored.
    """
    raise NotImplementedError
