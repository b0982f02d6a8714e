def alternate_caps(s):
    """Return the string `s` with the characters at even indexes (0, 2, ...) in upper case
    and those at odd indexes in lower case.
    """
    raise NotImplementedError
