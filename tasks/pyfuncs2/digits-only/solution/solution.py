def digits_only(s):
    return "".join(c for c in s if c in "0123456789")
