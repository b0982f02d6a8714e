def leaders(xs):
    out = []
    best = None
    for x in reversed(xs):
        if best is None or x > best:
            out.append(x)
            best = x
    return out[::-1]
