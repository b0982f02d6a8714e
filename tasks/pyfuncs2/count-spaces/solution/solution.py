def count_spaces(s):
    return s.count(" ")
