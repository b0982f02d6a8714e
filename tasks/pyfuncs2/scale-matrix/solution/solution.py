def scale_matrix(m, k):
    return [[x * k for x in row] for row in m]
