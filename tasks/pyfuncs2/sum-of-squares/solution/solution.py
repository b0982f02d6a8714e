def sum_of_squares(n):
    return sum(i * i for i in range(1, n + 1))
