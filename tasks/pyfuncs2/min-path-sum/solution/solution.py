def min_path_sum(grid):
    rows, cols = len(grid), len(grid[0])
    best = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        for j in range(cols):
            above = best[i - 1][j] if i else None
            left = best[i][j - 1] if j else None
            options = [v for v in (above, left) if v is not None]
            best[i][j] = grid[i][j] + (min(options) if options else 0)
    return best[-1][-1]
