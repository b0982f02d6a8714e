def same_sign(a, b):
    return (a > 0 and b > 0) or (a < 0 and b < 0)
