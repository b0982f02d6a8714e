def intervals_covering(intervals, x):
    return sum(1 for lo, hi in intervals if lo <= x <= hi)
