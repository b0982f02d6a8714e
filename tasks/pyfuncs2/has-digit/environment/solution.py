def has_digit(s):
    """Return `True` if at least one character of the string `s` is a decimal digit 0-9,
    else `False`.
    """
    raise NotImplementedError
