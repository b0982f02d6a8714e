def is_pangram(s):
    """Return `True` if the string `s` contains every letter from a to z at least once,
    ignoring case.
    """
    raise NotImplementedError
