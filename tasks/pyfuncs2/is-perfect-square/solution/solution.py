import math


def is_perfect_square(n):
    return n >= 0 and math.isqrt(n) ** 2 == n
