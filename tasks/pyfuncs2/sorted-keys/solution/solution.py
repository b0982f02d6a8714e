def sorted_keys(d):
    return sorted(d)
