def longest_rising_path(grid):
    rows, cols = len(grid), len(grid[0])
    memo = {}

    def longest(r, c):
        if (r, c) not in memo:
            best = 1
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < rows and 0 <= cc < cols and grid[rr][cc] > grid[r][c]:
                    best = max(best, 1 + longest(rr, cc))
            memo[(r, c)] = best
        return memo[(r, c)]

    return max(longest(r, c) for r in range(rows) for c in range(cols))
