def project_fields(records, fields):
    return [{f: r.get(f) for f in fields} for r in records]
