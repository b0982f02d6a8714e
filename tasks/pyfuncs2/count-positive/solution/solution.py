def count_positive(xs):
    return sum(1 for x in xs if x > 0)
