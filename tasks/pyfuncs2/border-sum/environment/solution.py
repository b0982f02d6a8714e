def border_sum(m):
    """Return the sum of the items on the outer border of the non-empty rectangular matrix
    `m` (a list of rows), counting each cell once.
    """
    raise NotImplementedError
