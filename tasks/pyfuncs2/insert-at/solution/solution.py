def insert_at(xs, i, item):
    return xs[:i] + [item] + xs[i:]
