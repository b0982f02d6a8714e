import math


def hypotenuse(a, b):
    return math.sqrt(a * a + b * b)
