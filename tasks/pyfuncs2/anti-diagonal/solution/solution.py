def anti_diagonal(m):
    n = len(m)
    return [m[i][n - 1 - i] for i in range(n)]
