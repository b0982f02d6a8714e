def spiral(matrix):
    out = []
    m = [list(r) for r in matrix]
    while m and m[0]:
        out += m.pop(0)
        m = [list(r) for r in zip(*m)][::-1]
    return out
