def sudoku_ok(grid):
    """`grid` is nine strings of nine characters, each a digit `'1'`-`'9'` or `'.'` for an
    empty cell. Return `True` if no digit occurs twice in any row, any column or any of the
    nine 3-by-3 boxes; empty cells never clash (the grid need not be solvable).
    """
    raise NotImplementedError
