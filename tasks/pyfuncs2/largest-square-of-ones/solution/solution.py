def largest_square_of_ones(grid):
    best = 0
    size = {}
    for r, row in enumerate(grid):
        for c, x in enumerate(row):
            if x == 1:
                s = 1 + min(size.get((r - 1, c), 0), size.get((r, c - 1), 0), size.get((r - 1, c - 1), 0))
                size[(r, c)] = s
                best = max(best, s)
    return best
