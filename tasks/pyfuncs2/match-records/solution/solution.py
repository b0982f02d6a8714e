def match_records(records, query):
    return [r for r in records if all(k in r and r[k] == v for k, v in query.items())]
