def longest_inner_list(groups):
    return max((len(g) for g in groups), default=0)
