def pluck_field(records, field):
    return [r[field] for r in records]
