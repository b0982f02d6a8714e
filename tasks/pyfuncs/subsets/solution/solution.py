def subsets(items):
    out = [[]]
    for x in items:
        out += [s + [x] for s in out]
    return out
