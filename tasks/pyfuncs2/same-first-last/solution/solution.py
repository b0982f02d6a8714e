def same_first_last(s):
    return s[0] == s[-1]
