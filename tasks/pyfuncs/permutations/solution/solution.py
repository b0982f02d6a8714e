def permutations(s):
    if len(s) <= 1:
        return [s]
    out = set()
    for i, c in enumerate(s):
        for rest in permutations(s[:i] + s[i + 1:]):
            out.add(c + rest)
    return sorted(out)
