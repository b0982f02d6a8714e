def grid_peaks(m):
    out = []
    for r, row in enumerate(m):
        for c, x in enumerate(row):
            ok = True
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < len(m) and 0 <= cc < len(m[rr]) and m[rr][cc] >= x:
                    ok = False
            if ok:
                out.append([r, c])
    return out
