def missing_ranges(nums, lo, hi):
    out = []
    prev = lo - 1
    for x in nums + [hi + 1]:
        if x - prev >= 2:
            out.append([prev + 1, x - 1])
        prev = x
    return out
