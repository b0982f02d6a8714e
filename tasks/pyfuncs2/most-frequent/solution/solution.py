def most_frequent(xs):
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    best = xs[0]
    for x in xs:
        if counts[x] > counts[best]:
            best = x
    return best
