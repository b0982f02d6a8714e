def is_toeplitz(m):
    """`m` is a matrix (a list of rows of equal length, maybe not square). Return `True` if
    every diagonal running from top-left to bottom-right holds one value only: `m[i][j] ==
    m[i + 1][j + 1]` wherever both exist.
    """
    raise NotImplementedError
