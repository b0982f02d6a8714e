def count_records_where(records, field, value):
    return sum(1 for r in records if field in r and r[field] == value)
