def merge_sorted(a, b):
    """`a` and `b` are lists of numbers sorted in increasing order. Return one sorted list
    holding all the numbers of both (duplicates kept).
    """
    raise NotImplementedError
