def diagonal_difference(m):
    n = len(m)
    return abs(sum(m[i][i] for i in range(n)) - sum(m[i][n - 1 - i] for i in range(n)))
