def same_length(a, b):
    return len(a) == len(b)
