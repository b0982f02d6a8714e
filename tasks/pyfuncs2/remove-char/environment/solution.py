def remove_char(s, c):
    """Return the string `s` with every occurrence of the character `c` removed.
    """
    raise NotImplementedError
