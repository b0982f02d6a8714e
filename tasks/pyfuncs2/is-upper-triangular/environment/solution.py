def is_upper_triangular(m):
    """`m` is a square matrix (a list of rows). Return `True` if it is upper triangular:
    only zeros under its main diagonal, in every cell `m[i][j]` whose row `i` is greater
    than its column `j`. Empty and 1-by-1 matrices are.
    """
    raise NotImplementedError
