def coin_change_ways(amount, coins):
    """Return in how many ways the amount `amount` can be paid with coins of the values in
    `coins` (unlimited coins of each; the order of coins does not matter; 1 way for amount
    0).
    """
    raise NotImplementedError
