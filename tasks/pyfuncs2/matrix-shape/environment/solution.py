def matrix_shape(m):
    """`m` is a non-empty matrix given as a list of rows, all of the same non-zero length.
    Return `[number of rows, number of columns]`.
    """
    raise NotImplementedError
