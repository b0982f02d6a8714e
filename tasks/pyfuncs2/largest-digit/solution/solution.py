def largest_digit(n):
    return max(int(d) for d in str(abs(n)))
