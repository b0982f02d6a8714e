def block_sum(m, r1, c1, r2, c2):
    return sum(m[r][c] for r in range(r1, r2 + 1) for c in range(c1, c2 + 1))
