def column_sums(m):
    return [sum(row[j] for row in m) for j in range(len(m[0]))]
