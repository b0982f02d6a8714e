def longest_balanced_bits(bits):
    first = {0: -1}
    balance = 0
    best = 0
    for i, b in enumerate(bits):
        balance += 1 if b == 1 else -1
        if balance in first:
            best = max(best, i - first[balance])
        else:
            first[balance] = i
    return best
