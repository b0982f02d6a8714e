def sum_squares_list(xs):
    return sum(x * x for x in xs)
