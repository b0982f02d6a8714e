def find_in_grid(grid, ch):
    """`grid` is a list of strings (rows of character cells). Return `[row, column]` of the
    first cell holding the character `ch`, reading rows top to bottom and each row left to
    right, or `None` when no cell holds it.
    """
    raise NotImplementedError
