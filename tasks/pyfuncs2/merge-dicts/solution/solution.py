def merge_dicts(a, b):
    return {**a, **b}
