import math


def degrees_to_radians(deg):
    return deg * math.pi / 180
