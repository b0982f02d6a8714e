def is_number_text(s):
    """Return `True` if the string `s` is a decimal number: an optional `+` or `-`, then
    digits with at most one `.` somewhere, and at least one digit; nothing else (no spaces,
    no exponent).
    """
    raise NotImplementedError
