def ends_with(s, suffix):
    """Return `True` if the string `s` ends with the string `suffix`, else `False`.
    """
    raise NotImplementedError
