import csv


def region_totals(path):
    totals = {}
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            amount = (row.get("amount") or "").strip()
            if not amount:
                continue
            region = row["region"].strip()
            totals[region] = totals.get(region, 0.0) + float(amount)
    return totals
