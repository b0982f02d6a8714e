def is_blank(s):
    """Return `True` when the string `s` is empty or holds only whitespace (spaces, tabs,
    newlines), else `False`.
    """
    raise NotImplementedError
