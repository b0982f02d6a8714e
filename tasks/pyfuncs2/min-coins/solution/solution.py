def min_coins(amount, coins):
    best = [0] + [None] * amount
    for v in range(1, amount + 1):
        options = [best[v - c] for c in coins if c <= v and best[v - c] is not None]
        best[v] = min(options) + 1 if options else None
    return -1 if best[amount] is None else best[amount]
