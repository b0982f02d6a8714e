def missing_number(xs):
    n = len(xs) + 1
    return n * (n + 1) // 2 - sum(xs)
