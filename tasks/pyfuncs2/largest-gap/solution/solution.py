def largest_gap(xs):
    s = sorted(xs)
    best = 0
    for i in range(len(s) - 1):
        best = max(best, s[i + 1] - s[i])
    return best
