def mode_all(xs):
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    if not counts:
        return []
    top = max(counts.values())
    return sorted(x for x, n in counts.items() if n == top)
