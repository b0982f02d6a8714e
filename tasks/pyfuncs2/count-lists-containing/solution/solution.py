def count_lists_containing(groups, item):
    return sum(1 for g in groups if item in g)
