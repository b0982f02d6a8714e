def has_double_letter(s):
    return any(s[i] == s[i + 1] for i in range(len(s) - 1))
