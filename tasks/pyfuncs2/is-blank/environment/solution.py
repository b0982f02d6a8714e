def is_blank(s):
    """Return `True` if the string `s` is empty or contains only whitespace, else `False`.
    """
    raise NotImplementedError
