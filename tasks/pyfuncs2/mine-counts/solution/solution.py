def mine_counts(grid):
    rows = len(grid)
    out = []
    for r in range(rows):
        line = ""
        for c in range(len(grid[r])):
            if grid[r][c] == "*":
                line += "*"
                continue
            n = 0
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    rr, cc = r + dr, c + dc
                    if 0 <= rr < rows and 0 <= cc < len(grid[rr]) and grid[rr][cc] == "*":
                        n += 1
            line += str(n)
        out.append(line)
    return out
