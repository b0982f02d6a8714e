def hamming(a, b):
    if len(a) != len(b):
        return None
    return sum(x != y for x, y in zip(a, b))
