def position_of_max(m):
    best = None
    for r, row in enumerate(m):
        for c, x in enumerate(row):
            if best is None or x > m[best[0]][best[1]]:
                best = [r, c]
    return best
