def count_wall_cells(grid):
    return sum(row.count("#") for row in grid)
