def is_right_triangle(a, b, c):
    x, y, z = sorted([a, b, c])
    return x * x + y * y == z * z
