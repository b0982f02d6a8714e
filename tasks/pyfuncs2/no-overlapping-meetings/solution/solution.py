def no_overlapping_meetings(meetings):
    ordered = sorted(meetings)
    for (s1, e1), (s2, e2) in zip(ordered, ordered[1:]):
        if s2 < e1:
            return False
    return True
