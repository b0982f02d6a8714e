def alphabet_position(c):
    return ord(c) - ord("a") + 1
