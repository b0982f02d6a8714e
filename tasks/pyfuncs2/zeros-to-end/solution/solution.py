def zeros_to_end(xs):
    rest = [x for x in xs if x != 0]
    return rest + [0] * (len(xs) - len(rest))
