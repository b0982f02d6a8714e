def all_positive(xs):
    return all(x > 0 for x in xs)
