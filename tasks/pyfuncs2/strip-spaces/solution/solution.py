def strip_spaces(s):
    return s.strip()
