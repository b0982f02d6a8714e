def neighbour_sum(m, r, c):
    total = 0
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if (dr or dc) and 0 <= r + dr < len(m) and 0 <= c + dc < len(m[0]):
                total += m[r + dr][c + dc]
    return total
