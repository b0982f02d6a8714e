def grid_neighbour_count(rows, cols, r, c):
    """A grid has `rows` rows and `cols` columns (both at least 1). Return how many cells of
    the grid touch the cell in row `r` and column `c` (0-based) by a side: up, down, left or
    right, counting only cells that exist.
    """
    raise NotImplementedError
