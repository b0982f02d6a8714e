def sum_of_evens_range(n):
    return sum(range(0, n + 1, 2))
