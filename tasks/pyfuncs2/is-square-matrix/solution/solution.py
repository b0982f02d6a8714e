def is_square_matrix(m):
    return all(len(row) == len(m) for row in m)
