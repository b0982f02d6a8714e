def digit_sum(n):
    return sum(int(d) for d in str(abs(n)))
