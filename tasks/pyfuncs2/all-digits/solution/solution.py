def all_digits(s):
    return len(s) > 0 and all(c in "0123456789" for c in s)
