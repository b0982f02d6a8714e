def pivot_sum(records):
    out = {}
    for r in records:
        cells = out.setdefault(r["row"], {})
        cells[r["col"]] = cells.get(r["col"], 0) + r["value"]
    return out
