def sum_multiples_3_or_5(n):
    return sum(i for i in range(1, n) if i % 3 == 0 or i % 5 == 0)
