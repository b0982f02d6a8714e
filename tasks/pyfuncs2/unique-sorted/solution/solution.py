def unique_sorted(xs):
    return sorted(set(xs))
