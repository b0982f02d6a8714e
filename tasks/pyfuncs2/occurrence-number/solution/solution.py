def occurrence_number(xs):
    seen = {}
    out = []
    for x in xs:
        seen[x] = seen.get(x, 0) + 1
        out.append(seen[x])
    return out
