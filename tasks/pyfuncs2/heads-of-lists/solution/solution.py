def heads_of_lists(groups):
    return [g[0] for g in groups if g]
