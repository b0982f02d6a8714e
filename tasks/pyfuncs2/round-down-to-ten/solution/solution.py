def round_down_to_ten(n):
    return n // 10 * 10
