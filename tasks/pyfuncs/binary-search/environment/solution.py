def binary_search(items, target):
    """`items` is a list of integers sorted in increasing order without duplicates. Return the
    index of `target` in it, or -1 when it is absent.
    """
    raise NotImplementedError
