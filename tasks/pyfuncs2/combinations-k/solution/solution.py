def combinations_k(xs, k):
    if k == 0:
        return [[]]
    out = []
    for i in range(len(xs) - k + 1):
        for rest in combinations_k(xs[i + 1:], k - 1):
            out.append([xs[i]] + rest)
    return out
