def count_wall_cells(grid):
    """`grid` is a list of strings of equal length, each character a cell: `'#'` a wall,
    anything else open. Return how many wall cells the grid has.
    """
    raise NotImplementedError
