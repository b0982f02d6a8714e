def split_even_odd(xs):
    return [[x for x in xs if x % 2 == 0], [x for x in xs if x % 2 != 0]]
