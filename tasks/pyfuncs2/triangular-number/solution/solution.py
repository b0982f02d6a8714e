def triangular_number(n):
    total, k = 0, 0
    while total < n:
        k += 1
        total += k
    return total == n
