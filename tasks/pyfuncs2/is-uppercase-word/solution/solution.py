def is_uppercase_word(s):
    return s.isupper()
