def matrix_column(m, c):
    """`m` is a matrix given as a list of rows of equal length. Return column `c` (counted
    from 0) as a list, from top to bottom (an empty list when `m` has no rows).
    """
    raise NotImplementedError
