def matrix_cell(m, r, c):
    return m[r][c]
