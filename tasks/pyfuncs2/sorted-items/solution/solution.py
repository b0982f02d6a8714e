def sorted_items(d):
    return [[k, d[k]] for k in sorted(d)]
