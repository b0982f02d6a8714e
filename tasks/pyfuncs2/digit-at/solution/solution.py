def digit_at(n, k):
    return abs(n) // 10 ** k % 10
