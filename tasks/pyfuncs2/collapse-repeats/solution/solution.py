def collapse_repeats(xs):
    out = []
    for x in xs:
        if not out or out[-1] != x:
            out.append(x)
    return out
