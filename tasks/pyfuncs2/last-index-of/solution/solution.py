def last_index_of(xs, item):
    for i in range(len(xs) - 1, -1, -1):
        if xs[i] == item:
            return i
    return -1
