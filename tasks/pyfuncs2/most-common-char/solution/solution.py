def most_common_char(s):
    counts = {}
    for c in s.lower():
        if c.isalpha():
            counts[c] = counts.get(c, 0) + 1
    if not counts:
        return ""
    return min(counts, key=lambda c: (-counts[c], c))
