def same_values(a, b):
    return set(a) == set(b)
