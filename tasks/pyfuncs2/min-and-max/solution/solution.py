def min_and_max(xs):
    return [min(xs), max(xs)]
