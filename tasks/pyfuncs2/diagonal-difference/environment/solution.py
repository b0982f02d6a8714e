def diagonal_difference(m):
    """Return the absolute difference between the sums of the two diagonals of the square
    matrix `m` (0 for an empty matrix).
    """
    raise NotImplementedError
