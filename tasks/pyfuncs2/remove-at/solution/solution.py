def remove_at(xs, i):
    if 0 <= i < len(xs):
        return xs[:i] + xs[i + 1:]
    return list(xs)
