def first_plus_last(xs):
    return xs[0] + xs[-1]
