import math


def cylinder_volume(r, h):
    return math.pi * r ** 2 * h
