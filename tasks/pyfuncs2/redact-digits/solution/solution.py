def redact_digits(s):
    return "".join("#" if c in "0123456789" else c for c in s)
