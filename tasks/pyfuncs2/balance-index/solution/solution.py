def balance_index(xs):
    total = sum(xs)
    left = 0
    for i, x in enumerate(xs):
        if left == total - left - x:
            return i
        left += x
    return -1
