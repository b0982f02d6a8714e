def sort_pairs_by_second(pairs):
    return sorted(pairs, key=lambda p: p[1])
