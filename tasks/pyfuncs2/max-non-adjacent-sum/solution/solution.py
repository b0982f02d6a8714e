def max_non_adjacent_sum(xs):
    take, skip = 0, 0
    for x in xs:
        take, skip = skip + x, max(take, skip)
    return max(take, skip)
