def keys_by_value(d):
    out = {}
    for k in sorted(d):
        out.setdefault(d[k], []).append(k)
    return out
