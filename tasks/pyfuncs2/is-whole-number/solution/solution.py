def is_whole_number(x):
    return x == int(x)
