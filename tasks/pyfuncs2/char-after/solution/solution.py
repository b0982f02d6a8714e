def char_after(s, c):
    i = s.find(c)
    if i < 0 or i + 1 >= len(s):
        return ""
    return s[i + 1]
