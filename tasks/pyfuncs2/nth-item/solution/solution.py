def nth_item(xs, i):
    if 0 <= i < len(xs):
        return xs[i]
    return None
