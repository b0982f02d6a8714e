def pad_matrix(m, value):
    width = len(m[0]) + 2
    return [[value] * width] + [[value] + row + [value] for row in m] + [[value] * width]
