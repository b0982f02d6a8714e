def sum_odd(xs):
    return sum(x for x in xs if x % 2 != 0)
