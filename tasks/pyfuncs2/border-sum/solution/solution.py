def border_sum(m):
    rows, cols = len(m), len(m[0])
    return sum(m[i][j] for i in range(rows) for j in range(cols) if i in (0, rows - 1) or j in (0, cols - 1))
