def dot_product(a, b):
    return sum(x * y for x, y in zip(a, b))
