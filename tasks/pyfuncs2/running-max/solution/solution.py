def running_max(xs):
    out = []
    for x in xs:
        out.append(x if not out or x > out[-1] else out[-1])
    return out
