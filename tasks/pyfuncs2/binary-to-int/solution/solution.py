def binary_to_int(s):
    value = 0
    for c in s:
        value = value * 2 + (c == "1")
    return value
