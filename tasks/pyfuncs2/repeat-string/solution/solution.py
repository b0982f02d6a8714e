def repeat_string(s, n):
    return s * n
