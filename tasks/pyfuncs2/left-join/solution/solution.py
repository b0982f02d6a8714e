def left_join(left, right, key):
    out = []
    for rec in left:
        match = next((r for r in right if r.get(key) == rec.get(key)), None)
        merged = dict(match) if match is not None else {}
        merged.update(rec)
        out.append(merged)
    return out
