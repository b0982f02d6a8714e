def capitalize_first(s):
    return s[:1].upper() + s[1:]
