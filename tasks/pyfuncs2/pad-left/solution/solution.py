def pad_left(s, width, fill):
    return fill * (width - len(s)) + s
