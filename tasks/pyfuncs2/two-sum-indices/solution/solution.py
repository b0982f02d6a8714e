def two_sum_indices(xs, target):
    first = {}
    for j, x in enumerate(xs):
        if target - x in first:
            return [first[target - x], j]
        first.setdefault(x, j)
    return []
