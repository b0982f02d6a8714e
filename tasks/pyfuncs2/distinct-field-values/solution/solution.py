def distinct_field_values(records, field):
    return sorted({r[field] for r in records if field in r})
