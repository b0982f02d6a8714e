def add_matrices(a, b):
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]
