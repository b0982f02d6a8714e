def count_greater_than_previous(xs):
    return sum(1 for i in range(1, len(xs)) if xs[i] > xs[i - 1])
