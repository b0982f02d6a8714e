def trailing_ones(n):
    count = 0
    while n & 1:
        count += 1
        n >>= 1
    return count
