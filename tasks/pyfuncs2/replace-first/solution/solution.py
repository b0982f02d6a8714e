def replace_first(s, old, new):
    return s.replace(old, new, 1)
