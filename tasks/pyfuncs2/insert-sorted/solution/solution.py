def insert_sorted(xs, value):
    i = 0
    while i < len(xs) and xs[i] <= value:
        i += 1
    return xs[:i] + [value] + xs[i:]
