def has_double_letter(s):
    """Return `True` if the string `s` has the same character twice in a row somewhere
    (case-sensitive).
    """
    raise NotImplementedError
