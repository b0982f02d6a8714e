def count_negative_cells(m):
    """Return how many numbers in the matrix `m` (a list of rows) are below zero; 0 when
    there are none or `m` is empty.
    """
    raise NotImplementedError
