def wildcard_match(s, pattern):
    ok = [[False] * (len(pattern) + 1) for _ in range(len(s) + 1)]
    ok[0][0] = True
    for j, p in enumerate(pattern, 1):
        ok[0][j] = ok[0][j - 1] and p == "*"
    for i in range(1, len(s) + 1):
        for j, p in enumerate(pattern, 1):
            if p == "*":
                ok[i][j] = ok[i - 1][j] or ok[i][j - 1]
            else:
                ok[i][j] = ok[i - 1][j - 1] and (p == "?" or p == s[i - 1])
    return ok[-1][-1]
