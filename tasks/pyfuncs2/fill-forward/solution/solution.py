def fill_forward(xs):
    out = []
    last = None
    for x in xs:
        if x is not None:
            last = x
        out.append(last)
    return out
