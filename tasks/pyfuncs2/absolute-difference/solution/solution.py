def absolute_difference(a, b):
    return abs(a - b)
