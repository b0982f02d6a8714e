def gcd(a, b):
    """Return the greatest common divisor of the integers `a` and `b` as a non-negative number.
    gcd(0, 0) is 0, and signs are ignored (gcd(-4, 6) is 2).
    """
    raise NotImplementedError
