def column_sums(m):
    """`m` is a non-empty matrix (list of rows of equal length). Return the list of the sums
    of each column.
    """
    raise NotImplementedError
