import math


def round_significant(x, digits):
    if x == 0:
        return 0.0
    e = math.floor(math.log10(abs(x)))
    return float(round(x, digits - 1 - e))
