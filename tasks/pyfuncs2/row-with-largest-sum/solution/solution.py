def row_with_largest_sum(m):
    best = -1
    for i, row in enumerate(m):
        if best == -1 or sum(row) > sum(m[best]):
            best = i
    return best
