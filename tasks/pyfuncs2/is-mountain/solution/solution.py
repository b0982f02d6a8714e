def is_mountain(xs):
    n = len(xs)
    i = 0
    while i + 1 < n and xs[i] < xs[i + 1]:
        i += 1
    if i == 0 or i == n - 1:
        return False
    while i + 1 < n and xs[i] > xs[i + 1]:
        i += 1
    return i == n - 1
