def matrix_trace(m):
    """`m` is a square matrix given as a list of rows. Return the sum of its main diagonal
    (0 for an empty matrix).
    """
    raise NotImplementedError
