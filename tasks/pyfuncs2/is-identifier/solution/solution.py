def is_identifier(s):
    ok_first = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
    return bool(s) and s[0] in ok_first and all(c in ok_first or c in "0123456789" for c in s[1:])
