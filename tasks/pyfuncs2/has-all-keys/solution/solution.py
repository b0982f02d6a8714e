def has_all_keys(record, required):
    return all(k in record for k in required)
