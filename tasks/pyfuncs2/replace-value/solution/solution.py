def replace_value(xs, old, new):
    return [new if x == old else x for x in xs]
