def rotate_matrix(m):
    """Return the matrix `m` (a list of rows, maybe not square) rotated 90 degrees
    clockwise.
    """
    raise NotImplementedError
