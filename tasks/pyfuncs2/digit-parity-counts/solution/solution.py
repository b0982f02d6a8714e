def digit_parity_counts(n):
    digits = str(abs(n))
    evens = sum(1 for d in digits if int(d) % 2 == 0)
    return [evens, len(digits) - evens]
