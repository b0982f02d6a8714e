def smallest_missing_positive(xs):
    present = set(xs)
    n = 1
    while n in present:
        n += 1
    return n
