def count_grid_paths(rows, cols):
    """Return how many paths lead from the top-left to the bottom-right cell of a grid with
    `rows` rows and `cols` columns when each step goes one cell right or one cell down (1
    for a single cell).
    """
    raise NotImplementedError
