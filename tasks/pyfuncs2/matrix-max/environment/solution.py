def matrix_max(m):
    """Return the largest number in the matrix `m`, a non-empty list of non-empty rows.
    """
    raise NotImplementedError
