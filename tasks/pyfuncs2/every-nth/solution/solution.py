def every_nth(xs, n):
    return xs[::n]
