def subsets(items):
    """Return every subset of the list `items` (whose elements are distinct) as a list of
    lists. Each subset keeps the elements in their order in `items`; the subsets may come in
    any order. The empty subset is included.
    """
    raise NotImplementedError
