import math


def round_half_up(x):
    return math.floor(x + 0.5)
