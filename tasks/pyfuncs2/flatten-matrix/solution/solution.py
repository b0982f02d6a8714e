def flatten_matrix(m):
    return [x for row in m for x in row]
