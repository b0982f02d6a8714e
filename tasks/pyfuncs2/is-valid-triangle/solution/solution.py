def is_valid_triangle(a, b, c):
    if min(a, b, c) <= 0:
        return False
    return a < b + c and b < a + c and c < a + b
