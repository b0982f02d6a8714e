def grid_neighbour_count(rows, cols, r, c):
    steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    return sum(1 for dr, dc in steps if 0 <= r + dr < rows and 0 <= c + dc < cols)
