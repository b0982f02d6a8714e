from math import gcd


def common_string_divisor(a, b):
    if a + b != b + a:
        return ""
    return a[: gcd(len(a), len(b))]
