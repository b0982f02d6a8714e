def matrix_cell(m, r, c):
    """`m` is a matrix given as a list of rows. Return the item in row `r` and column `c`
    (both counted from 0).
    """
    raise NotImplementedError
