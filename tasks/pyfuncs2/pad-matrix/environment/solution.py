def pad_matrix(m, value):
    """`m` is a non-empty matrix (a list of non-empty rows of equal length). Return a new
    matrix with one extra row above and below and one extra column on each side, every new
    cell holding `value`.
    """
    raise NotImplementedError
