def mirror_rows(m):
    return [row[::-1] for row in m]
