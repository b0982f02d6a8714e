def is_valid_username(s):
    """Return `True` if the string `s` is a valid user name: 3 to 12 characters long, each
    one a lower-case letter `a`-`z`, a digit 0-9 or `_`.
    """
    raise NotImplementedError
