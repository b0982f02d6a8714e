def add_lists(a, b):
    return [x + y for x, y in zip(a, b)]
