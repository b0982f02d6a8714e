def free_slots(busy, day_start, day_end):
    free = []
    t = day_start
    for s, e in sorted(busy):
        if s > t:
            free.append([t, min(s, day_end)])
        t = max(t, e)
        if t >= day_end:
            break
    if t < day_end:
        free.append([t, day_end])
    return [f for f in free if f[0] < f[1]]
