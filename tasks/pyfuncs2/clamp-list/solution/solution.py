def clamp_list(xs, lo, hi):
    out = []
    for x in xs:
        if x < lo:
            out.append(lo)
        elif x > hi:
            out.append(hi)
        else:
            out.append(x)
    return out
