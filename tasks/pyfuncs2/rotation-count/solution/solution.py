def rotation_count(xs):
    if not xs:
        return 0
    return xs.index(min(xs))
