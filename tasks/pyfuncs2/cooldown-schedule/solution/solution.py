def cooldown_schedule(tasks, n):
    if not tasks:
        return 0
    counts = {}
    for t in tasks:
        counts[t] = counts.get(t, 0) + 1
    most = max(counts.values())
    tied = sum(1 for c in counts.values() if c == most)
    return max(len(tasks), (most - 1) * (n + 1) + tied)
