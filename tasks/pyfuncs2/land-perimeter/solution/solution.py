def land_perimeter(grid):
    total = 0
    for r, row in enumerate(grid):
        for c, x in enumerate(row):
            if x != 1:
                continue
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                rr, cc = r + dr, c + dc
                if not (0 <= rr < len(grid) and 0 <= cc < len(grid[rr])) or grid[rr][cc] != 1:
                    total += 1
    return total
