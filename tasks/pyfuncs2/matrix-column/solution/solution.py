def matrix_column(m, c):
    return [row[c] for row in m]
