def is_square_matrix(m):
    """`m` is a list of rows (lists). Return `True` if every row has exactly as many items
    as `m` has rows; an empty `m` is square.
    """
    raise NotImplementedError
