def take_while_positive(xs):
    out = []
    for x in xs:
        if x <= 0:
            break
        out.append(x)
    return out
