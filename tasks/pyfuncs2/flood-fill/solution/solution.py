def flood_fill(grid, row, col, color):
    out = [list(r) for r in grid]
    old = out[row][col]
    if old == color:
        return out
    stack = [(row, col)]
    while stack:
        i, j = stack.pop()
        if 0 <= i < len(out) and 0 <= j < len(out[0]) and out[i][j] == old:
            out[i][j] = color
            stack += [(i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)]
    return out
