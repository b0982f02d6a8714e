def count_distinct(xs):
    return len(set(xs))
