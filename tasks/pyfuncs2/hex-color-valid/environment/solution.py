def hex_color_valid(s):
    """Return `True` if the string `s` is `#` followed by exactly 6 hexadecimal digits (0-9,
    a-f, A-F).
    """
    raise NotImplementedError
