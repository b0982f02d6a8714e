import string


def missing_letters(s):
    present = set(s.lower())
    return "".join(c for c in string.ascii_lowercase if c not in present)
