def is_upper_triangular(m):
    for i, row in enumerate(m):
        for j in range(i):
            if row[j] != 0:
                return False
    return True
