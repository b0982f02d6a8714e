def first_per_field_value(records, field):
    seen = []
    out = []
    for r in records:
        if r[field] not in seen:
            seen.append(r[field])
            out.append(r)
    return out
