def count_grid_paths(rows, cols):
    ways = [1] * cols
    for _ in range(rows - 1):
        for j in range(1, cols):
            ways[j] += ways[j - 1]
    return ways[-1]
