def min_coins(amount, coins):
    """Return the fewest coins with values from `coins` (unlimited of each) that add up to
    exactly `amount`, or -1 if it cannot be done (0 for amount 0). Greedy choice is not
    always right.
    """
    raise NotImplementedError
