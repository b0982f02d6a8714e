def next_even(n):
    return n + 2 if n % 2 == 0 else n + 1
