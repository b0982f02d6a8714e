import math


def shipping_cost(kg):
    if kg <= 1:
        return 5
    return 5 + 2 * math.ceil(kg - 1)
