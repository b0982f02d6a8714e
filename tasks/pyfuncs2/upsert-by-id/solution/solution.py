def upsert_by_id(records, updates):
    out = [dict(r) for r in records]
    for u in updates:
        for r in out:
            if r["id"] == u["id"]:
                r.update(u)
                break
        else:
            out.append(dict(u))
    return out
