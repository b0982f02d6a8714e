def digits_never_decrease(n):
    digits = str(n)
    return all(a <= b for a, b in zip(digits, digits[1:]))
