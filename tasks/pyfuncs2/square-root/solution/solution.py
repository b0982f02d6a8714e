import math


def square_root(x):
    return math.sqrt(x)
