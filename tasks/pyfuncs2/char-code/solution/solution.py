def char_code(c):
    return ord(c)
