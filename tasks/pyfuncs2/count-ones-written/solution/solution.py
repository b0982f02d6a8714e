def count_ones_written(n):
    count = 0
    place = 1
    while place <= n:
        high, low = divmod(n, place * 10)
        digit = low // place
        count += high * place
        if digit > 1:
            count += place
        elif digit == 1:
            count += low % place + 1
        place *= 10
    return count
