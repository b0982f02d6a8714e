def is_magic_square(m):
    n = len(m)
    target = sum(m[0])
    lines = [list(row) for row in m]
    lines += [[m[r][c] for r in range(n)] for c in range(n)]
    lines.append([m[i][i] for i in range(n)])
    lines.append([m[i][n - 1 - i] for i in range(n)])
    return all(sum(line) == target for line in lines)
