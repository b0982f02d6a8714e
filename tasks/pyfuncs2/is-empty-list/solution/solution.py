def is_empty_list(xs):
    return len(xs) == 0
