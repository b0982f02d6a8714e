def factorial_zeros(n):
    count, p = 0, 5
    while p <= n:
        count += n // p
        p *= 5
    return count
