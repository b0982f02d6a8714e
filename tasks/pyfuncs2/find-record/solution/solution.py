def find_record(records, field, value):
    for r in records:
        if field in r and r[field] == value:
            return r
    return None
