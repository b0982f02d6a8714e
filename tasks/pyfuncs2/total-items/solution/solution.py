def total_items(groups):
    return sum(len(g) for g in groups)
