def average_by_group(records):
    sums = {}
    counts = {}
    for r in records:
        sums[r["group"]] = sums.get(r["group"], 0) + r["score"]
        counts[r["group"]] = counts.get(r["group"], 0) + 1
    return {g: sums[g] / counts[g] for g in sums}
