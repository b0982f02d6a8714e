def count_uppercase(s):
    return sum(1 for c in s if c.isupper())
