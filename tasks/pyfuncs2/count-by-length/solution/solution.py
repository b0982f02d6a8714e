def count_by_length(s):
    out = {}
    for w in s.split():
        key = str(len(w))
        out[key] = out.get(key, 0) + 1
    return out
