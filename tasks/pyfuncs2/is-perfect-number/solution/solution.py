def is_perfect_number(n):
    return n > 1 and sum(d for d in range(1, n) if n % d == 0) == n
