def is_valid_username(s):
    if len(s) < 3 or len(s) > 12:
        return False
    for c in s:
        if not ("a" <= c <= "z" or "0" <= c <= "9" or c == "_"):
            return False
    return True
