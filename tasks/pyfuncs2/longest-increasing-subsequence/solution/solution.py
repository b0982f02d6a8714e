def longest_increasing_subsequence(xs):
    best = []
    for x in xs:
        lengths = [best[j] for j in range(len(best)) if xs[j] < x]
        best.append(max(lengths, default=0) + 1)
    return max(best, default=0)
