def list_difference(a, b):
    return [x for x in a if x not in b]
