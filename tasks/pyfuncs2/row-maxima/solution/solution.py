def row_maxima(m):
    out = []
    for row in m:
        out.append(max(row))
    return out
