def starts_with_capital(s):
    """Return `True` if the non-empty string `s` starts with an upper-case letter, else
    `False`.
    """
    raise NotImplementedError
