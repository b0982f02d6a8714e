def count_digits(n):
    return len(str(abs(n)))
