def is_uppercase_word(s):
    """Return `True` if the string `s` contains at least one letter and none of its letters
    is lower case.
    """
    raise NotImplementedError
