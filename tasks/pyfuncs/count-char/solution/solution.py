def count_char(s, ch):
    return s.count(ch)
