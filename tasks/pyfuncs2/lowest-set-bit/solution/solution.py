def lowest_set_bit(n):
    if n == 0:
        return -1
    i = 0
    while n % 2 == 0:
        n //= 2
        i += 1
    return i
