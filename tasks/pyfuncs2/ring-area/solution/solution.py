import math


def ring_area(outer, inner):
    return math.pi * (outer ** 2 - inner ** 2)
