def binomial(n, k):
    """Return the number of ways to choose `k` items from `n` (0 when `k` < 0 or `k` > `n`).
    """
    raise NotImplementedError
