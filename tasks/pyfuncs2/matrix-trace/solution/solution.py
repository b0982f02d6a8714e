def matrix_trace(m):
    return sum(m[i][i] for i in range(len(m)))
