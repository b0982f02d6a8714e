def integer_divide(a, b):
    return a // b
