def char_code(c):
    """Return the Unicode code point (an integer) of the one-character string `c`.
    """
    raise NotImplementedError
