def all_digits(s):
    """Return `True` if the string `s` is non-empty and every character is a decimal digit
    0-9.
    """
    raise NotImplementedError
