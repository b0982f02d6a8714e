def matrix_shape(m):
    return [len(m), len(m[0])]
