def anti_diagonals(m):
    if not m:
        return []
    rows, cols = len(m), len(m[0])
    out = []
    for s in range(rows + cols - 1):
        out.append([m[r][s - r] for r in range(rows) if 0 <= s - r < cols])
    return out
