def is_isogram(s):
    """Return `True` if no letter occurs more than once in the string `s`, ignoring case;
    spaces and hyphens may repeat.
    """
    raise NotImplementedError
