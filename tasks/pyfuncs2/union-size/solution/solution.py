def union_size(a, b):
    return len(set(a) | set(b))
