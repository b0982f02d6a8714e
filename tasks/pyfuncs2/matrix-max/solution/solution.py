def matrix_max(m):
    return max(max(row) for row in m)
