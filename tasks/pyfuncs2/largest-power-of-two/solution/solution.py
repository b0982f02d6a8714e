def largest_power_of_two(n):
    p = 1
    while p * 2 <= n:
        p *= 2
    return p
