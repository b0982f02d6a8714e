def names_missing_field(records, field):
    return [r["name"] for r in records if r.get(field) is None]
