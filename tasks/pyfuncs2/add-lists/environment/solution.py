def add_lists(a, b):
    """`a` and `b` are number lists of the same length. Return the list whose item `i` is
    `a[i] + b[i]` (empty for empty lists).
    """
    raise NotImplementedError
