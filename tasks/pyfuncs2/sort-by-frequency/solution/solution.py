def sort_by_frequency(xs):
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    return sorted(xs, key=lambda x: (-counts[x], x))
