def best_trade(prices):
    """`prices` lists a stock's price day by day. Return the largest profit `prices[j] -
    prices[i]` with `i < j` (buy first, sell on a later day), or 0 when no trade makes money
    (also for fewer than two days).
    """
    raise NotImplementedError
