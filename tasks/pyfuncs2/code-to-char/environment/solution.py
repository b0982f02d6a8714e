def code_to_char(n):
    """Return the one-character string whose Unicode code point is the integer `n`.
    """
    raise NotImplementedError
