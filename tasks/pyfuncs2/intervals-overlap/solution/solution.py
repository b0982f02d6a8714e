def intervals_overlap(a, b):
    return a[0] <= b[1] and b[0] <= a[1]
