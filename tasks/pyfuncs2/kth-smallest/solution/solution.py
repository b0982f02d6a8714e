def kth_smallest(xs, k):
    values = sorted(set(xs))
    return values[k - 1] if 1 <= k <= len(values) else None
