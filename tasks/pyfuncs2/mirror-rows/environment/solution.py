def mirror_rows(m):
    """Return a new matrix in which every row of the matrix `m` (a list of rows) has its
    items in reverse order; the order of the rows stays. An empty matrix gives an empty
    list.
    """
    raise NotImplementedError
