def field_range(records, field):
    if not records:
        return None
    values = [r[field] for r in records]
    return [min(values), max(values)]
