def add_matrices(a, b):
    """Return the element-wise sum of the matrices `a` and `b`, which have the same shape
    (lists of rows).
    """
    raise NotImplementedError
