def concat_lists(a, b):
    return a + b
