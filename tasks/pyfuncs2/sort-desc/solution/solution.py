def sort_desc(xs):
    return sorted(xs, reverse=True)
