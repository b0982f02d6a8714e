def trailing_zeros(n):
    count = 0
    while n % 10 == 0:
        n //= 10
        count += 1
    return count
