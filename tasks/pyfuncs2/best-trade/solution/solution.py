def best_trade(prices):
    best = 0
    low = None
    for p in prices:
        if low is not None and p - low > best:
            best = p - low
        if low is None or p < low:
            low = p
    return best
