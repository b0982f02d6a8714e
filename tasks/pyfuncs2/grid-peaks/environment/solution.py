def grid_peaks(m):
    """Return the `[row, column]` positions of the cells of the number matrix `m` (a list of
    rows) that are strictly greater than every neighbour sharing a side with them (cells at
    the edge have fewer neighbours; a 1-by-1 matrix's cell is a peak), reading rows top to
    bottom and left to right.
    """
    raise NotImplementedError
