def derangements(n):
    if n == 0:
        return 1
    a, b = 1, 0
    for m in range(2, n + 1):
        a, b = b, (m - 1) * (a + b)
    return b
