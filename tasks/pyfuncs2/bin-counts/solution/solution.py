def bin_counts(xs, w):
    counts = {}
    for x in xs:
        start = (x // w) * w
        counts[start] = counts.get(start, 0) + 1
    return [[s, counts[s]] for s in sorted(counts)]
