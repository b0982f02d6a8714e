def bump_count(counts, key):
    out = dict(counts)
    out[key] = out.get(key, 0) + 1
    return out
