def names_by_group(records, field):
    out = {}
    for r in records:
        out.setdefault(r[field], []).append(r["name"])
    return out
