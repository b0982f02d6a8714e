def is_positive(x):
    return x > 0
