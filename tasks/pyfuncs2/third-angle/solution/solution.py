def third_angle(a, b):
    return 180 - a - b
