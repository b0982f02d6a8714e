def chunk_string(s, n):
    """Return the string `s` cut into pieces of `n` characters from the right, so that only
    the first piece may be shorter (`'1234567'`, 3 gives `['1', '234', '567']`); `[]` for an
    empty string.
    """
    raise NotImplementedError
