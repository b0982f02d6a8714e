def all_unique(xs):
    return len(set(xs)) == len(xs)
