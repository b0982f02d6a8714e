def list_max_minus_min(xs):
    return max(xs) - min(xs)
