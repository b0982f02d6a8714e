def sum_values(d):
    return sum(d.values())
