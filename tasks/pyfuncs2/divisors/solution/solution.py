def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]
