def drop_first(xs):
    return xs[1:]
