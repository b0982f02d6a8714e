def sum_field(records, field):
    return sum(r[field] for r in records)
