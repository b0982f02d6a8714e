def to_lower(s):
    """Return the string `s` with every letter in lower case.
    """
    raise NotImplementedError
