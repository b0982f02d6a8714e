def max_product_split(n):
    best = [0, 1] + [0] * (n - 1)
    for m in range(2, n + 1):
        best[m] = max(max(k, best[k]) * max(m - k, best[m - k]) for k in range(1, m))
    return best[n]
