def is_divisible(n, d):
    return n % d == 0
