def all_zero_rows(m):
    """Return the list of the indexes (from 0) of the rows of the matrix `m` (a list of
    rows) whose items are all 0, in increasing order; an empty row counts as all zero.
    """
    raise NotImplementedError
