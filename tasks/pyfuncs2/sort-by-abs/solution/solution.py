def sort_by_abs(xs):
    return sorted(xs, key=abs)
