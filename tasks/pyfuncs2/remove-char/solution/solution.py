def remove_char(s, c):
    return s.replace(c, "")
