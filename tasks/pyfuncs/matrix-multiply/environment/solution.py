def matmul(a, b):
    """Multiply the matrices `a` (n x m) and `b` (m x p), given as lists of rows, and return
    the n x p product as a list of rows.
    """
    raise NotImplementedError
