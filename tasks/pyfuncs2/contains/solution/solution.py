def contains(xs, item):
    return item in xs
