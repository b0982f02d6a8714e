def zero_row_and_column(m):
    """Return a new matrix like `m` (a list of rows of equal length) in which every row and
    every column that contains a 0 in `m` is set to all zeros. Only the zeros of the
    original matrix spread, not the new ones.
    """
    raise NotImplementedError
