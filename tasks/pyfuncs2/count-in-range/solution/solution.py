def count_in_range(xs, lo, hi):
    return sum(1 for x in xs if lo <= x <= hi)
