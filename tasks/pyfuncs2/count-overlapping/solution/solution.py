def count_overlapping(s, sub):
    return sum(1 for i in range(len(s) - len(sub) + 1) if s[i:i + len(sub)] == sub)
