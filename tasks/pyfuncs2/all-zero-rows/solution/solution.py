def all_zero_rows(m):
    return [i for i, row in enumerate(m) if all(x == 0 for x in row)]
