def scale_matrix(m, k):
    """Return a new matrix (a list of rows) with every number of the matrix `m` multiplied
    by `k`; an empty matrix gives an empty list.
    """
    raise NotImplementedError
