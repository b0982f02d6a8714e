def top_k(xs, k):
    return sorted(xs, reverse=True)[:k]
