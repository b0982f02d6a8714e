def is_between(x, lo, hi):
    return lo <= x <= hi
