def count_by(records, key):
    out = {}
    for r in records:
        if key in r:
            out[r[key]] = out.get(r[key], 0) + 1
    return out
