def last_digit(n):
    return abs(n) % 10
