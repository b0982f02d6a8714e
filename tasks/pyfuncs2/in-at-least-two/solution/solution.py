def in_at_least_two(groups):
    seen_in = {}
    for g in groups:
        for v in set(g):
            seen_in[v] = seen_in.get(v, 0) + 1
    return sorted(v for v, n in seen_in.items() if n >= 2)
