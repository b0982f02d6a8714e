def nth_odd_number(n):
    return 2 * n - 1
