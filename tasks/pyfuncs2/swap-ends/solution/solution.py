def swap_ends(xs):
    if len(xs) < 2:
        return list(xs)
    return [xs[-1]] + xs[1:-1] + [xs[0]]
