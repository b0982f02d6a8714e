def last_item(xs):
    return xs[-1]
