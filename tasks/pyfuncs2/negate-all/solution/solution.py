def negate_all(xs):
    return [-x for x in xs]
