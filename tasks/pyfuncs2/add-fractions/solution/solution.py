from math import gcd


def add_fractions(a, b, c, d):
    num, den = a * d + c * b, b * d
    if den < 0:
        num, den = -num, -den
    g = gcd(num, den)
    return [num // g, den // g]
