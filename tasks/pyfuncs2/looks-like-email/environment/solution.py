def looks_like_email(s):
    """Return `True` if the string `s` contains exactly one `@` with at least one character
    before it and at least one character after it, else `False`.
    """
    raise NotImplementedError
