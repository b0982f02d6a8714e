def nested_sum(items):
    total = 0
    for x in items:
        total += nested_sum(x) if isinstance(x, list) else x
    return total
