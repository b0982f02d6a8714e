def distinct_subsequences(s, t):
    ways = [1] + [0] * len(t)
    for c in s:
        for j in range(len(t), 0, -1):
            if t[j - 1] == c:
                ways[j] += ways[j - 1]
    return ways[len(t)]
