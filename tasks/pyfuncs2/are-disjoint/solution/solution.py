def are_disjoint(a, b):
    return not (set(a) & set(b))
