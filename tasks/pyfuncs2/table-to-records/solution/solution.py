def table_to_records(table):
    if not table:
        return []
    header = table[0]
    return [{name: row[i] for i, name in enumerate(header)} for row in table[1:]]
