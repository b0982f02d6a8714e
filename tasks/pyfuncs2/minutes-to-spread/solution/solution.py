def minutes_to_spread(grid):
    rows = len(grid)
    cells = {(r, c): x for r, row in enumerate(grid) for c, x in enumerate(row)}
    frontier = [p for p, x in cells.items() if x == 2]
    clean = sum(1 for x in cells.values() if x == 1)
    minutes = 0
    while clean and frontier:
        nxt = []
        for r, c in frontier:
            for p in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if cells.get(p) == 1:
                    cells[p] = 2
                    clean -= 1
                    nxt.append(p)
        frontier = nxt
        if nxt:
            minutes += 1
    return minutes if clean == 0 else -1
