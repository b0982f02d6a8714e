import math


def round_to_half(x):
    return math.floor(x * 2 + 0.5) / 2
