def last_char(s):
    return s[-1] if s else ""
