def is_valid_pin(s):
    """Return `True` if the string `s` is a PIN: exactly 4 or exactly 6 characters, all of
    them decimal digits 0-9.
    """
    raise NotImplementedError
