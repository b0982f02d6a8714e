def last_word(s):
    words = s.split()
    return words[-1] if words else ""
