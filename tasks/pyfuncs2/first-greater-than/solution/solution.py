def first_greater_than(xs, limit):
    for x in xs:
        if x > limit:
            return x
    return None
