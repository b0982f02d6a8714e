def sum_to_n(n):
    return n * (n + 1) // 2
