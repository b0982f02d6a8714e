def common_sorted(a, b):
    return sorted(set(a) & set(b))
