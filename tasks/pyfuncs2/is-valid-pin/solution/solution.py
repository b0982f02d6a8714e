def is_valid_pin(s):
    if len(s) != 4 and len(s) != 6:
        return False
    return all(c in "0123456789" for c in s)
