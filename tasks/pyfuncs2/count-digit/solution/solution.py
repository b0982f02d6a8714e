def count_digit(n, d):
    return str(n).count(str(d))
