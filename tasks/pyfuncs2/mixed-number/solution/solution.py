from math import gcd


def mixed_number(num, den):
    whole, rest = divmod(num, den)
    if rest == 0:
        return str(whole)
    g = gcd(rest, den)
    fraction = f"{rest // g}/{den // g}"
    return fraction if whole == 0 else f"{whole} {fraction}"
