def slice_between(xs, start, stop):
    return xs[start:stop]
