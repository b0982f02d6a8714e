def has_equal_neighbours(xs):
    for a, b in zip(xs, xs[1:]):
        if a == b:
            return True
    return False
