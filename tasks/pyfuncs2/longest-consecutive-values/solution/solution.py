def longest_consecutive_values(xs):
    values = set(xs)
    best = 0
    for v in values:
        if v - 1 not in values:
            length = 1
            while v + length in values:
                length += 1
            best = max(best, length)
    return best
