def flatten_matrix(m):
    """Return one list of all items of the matrix `m` (a list of rows), row by row and left
    to right within a row; an empty list when `m` has no items.
    """
    raise NotImplementedError
