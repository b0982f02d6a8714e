def game_of_life_step(grid):
    rows = len(grid)
    cols = len(grid[0]) if rows else 0

    def alive_around(i, j):
        return sum(grid[a][b] for a in range(i - 1, i + 2) for b in range(j - 1, j + 2)
                   if (a, b) != (i, j) and 0 <= a < rows and 0 <= b < cols)

    return [[1 if alive_around(i, j) == 3 or (grid[i][j] and alive_around(i, j) == 2) else 0
             for j in range(cols)] for i in range(rows)]
