def mirror_string(s):
    return s + s[::-1]
