def first_n(xs, n):
    return xs[:n]
