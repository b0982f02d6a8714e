def is_subset(a, b):
    return set(a) <= set(b)
