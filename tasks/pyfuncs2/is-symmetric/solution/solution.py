def is_symmetric(m):
    return all(m[i][j] == m[j][i] for i in range(len(m)) for j in range(len(m)))
