def text_to_int(s):
    return int(s)
