def first_unique_char(s):
    for i, c in enumerate(s):
        if s.count(c) == 1:
            return i
    return -1
