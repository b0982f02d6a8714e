def reverse_list(xs):
    return xs[::-1]
