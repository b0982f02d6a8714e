def sudoku_ok(grid):
    units = [[(r, c) for c in range(9)] for r in range(9)]
    units += [[(r, c) for r in range(9)] for c in range(9)]
    units += [[(br + r, bc + c) for r in range(3) for c in range(3)] for br in (0, 3, 6) for bc in (0, 3, 6)]
    for unit in units:
        digits = [grid[r][c] for r, c in unit if grid[r][c] != "."]
        if len(digits) != len(set(digits)):
            return False
    return True
