def fewest_removals(intervals):
    kept = 0
    end = None
    for s, e in sorted(intervals, key=lambda iv: iv[1]):
        if end is None or s >= end:
            kept += 1
            end = e
    return len(intervals) - kept
