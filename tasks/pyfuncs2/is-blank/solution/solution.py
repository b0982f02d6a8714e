def is_blank(s):
    return s.strip() == ""
