def double_each_char(s):
    """Return the string `s` with every character written twice in a row (`'abc'` becomes
    `'aabbcc'`); an empty string stays empty.
    """
    raise NotImplementedError
