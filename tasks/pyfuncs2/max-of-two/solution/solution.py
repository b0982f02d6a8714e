def max_of_two(a, b):
    return a if a >= b else b
