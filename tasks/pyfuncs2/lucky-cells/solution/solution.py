def lucky_cells(m):
    out = []
    for row in m:
        x = min(row)
        c = row.index(x)
        if all(r[c] <= x for r in m):
            out.append(x)
    return sorted(out)
