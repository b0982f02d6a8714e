def has_digit(s):
    return any(c.isdigit() for c in s)
