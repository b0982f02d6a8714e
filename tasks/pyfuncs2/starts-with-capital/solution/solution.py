def starts_with_capital(s):
    return s[0].isupper()
