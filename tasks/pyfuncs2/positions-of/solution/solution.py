def positions_of(xs, item):
    return [i for i, x in enumerate(xs) if x == item]
