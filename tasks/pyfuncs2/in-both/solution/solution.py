def in_both(a, b, item):
    return item in a and item in b
