def flatten_deep(items):
    out = []
    for x in items:
        if isinstance(x, list):
            out.extend(flatten_deep(x))
        else:
            out.append(x)
    return out
