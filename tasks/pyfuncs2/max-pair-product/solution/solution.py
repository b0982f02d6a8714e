def max_pair_product(xs):
    s = sorted(xs)
    return max(s[0] * s[1], s[-1] * s[-2])
