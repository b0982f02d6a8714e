def is_symmetric(m):
    """Return `True` if the square matrix `m` (a list of rows) equals its transpose:
    `m[i][j] == m[j][i]` everywhere.
    """
    raise NotImplementedError
