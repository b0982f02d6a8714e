def identity_matrix(n):
    """Return the `n` by `n` identity matrix as a list of rows: 1 on the main diagonal, 0
    elsewhere (an empty list for `n` = 0).
    """
    raise NotImplementedError
