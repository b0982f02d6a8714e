def round_two(x):
    return round(x, 2)
