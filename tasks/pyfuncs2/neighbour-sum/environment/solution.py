def neighbour_sum(m, r, c):
    """Return the sum of the up to eight cells of the matrix `m` (a list of rows) that touch
    the cell in row `r`, column `c` by a side or a corner; the cell itself is not counted,
    and cells outside the matrix are not there.
    """
    raise NotImplementedError
