def middle_item(xs):
    if not xs:
        return None
    return xs[len(xs) // 2]
