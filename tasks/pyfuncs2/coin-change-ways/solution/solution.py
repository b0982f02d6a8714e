def coin_change_ways(amount, coins):
    ways = [1] + [0] * amount
    for coin in coins:
        for v in range(coin, amount + 1):
            ways[v] += ways[v - coin]
    return ways[amount]
