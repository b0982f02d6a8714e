def is_interleaving(a, b, c):
    if len(a) + len(b) != len(c):
        return False
    ok = [True] + [False] * len(b)
    for j in range(1, len(b) + 1):
        ok[j] = ok[j - 1] and b[j - 1] == c[j - 1]
    for i in range(1, len(a) + 1):
        ok[0] = ok[0] and a[i - 1] == c[i - 1]
        for j in range(1, len(b) + 1):
            ok[j] = (ok[j] and a[i - 1] == c[i + j - 1]) or (ok[j - 1] and b[j - 1] == c[i + j - 1])
    return ok[len(b)]
