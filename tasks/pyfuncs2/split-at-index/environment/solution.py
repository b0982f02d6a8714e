def split_at_index(s, i):
    """Return a list of two strings: the first `i` characters of `s` and the rest of `s`
    (`i` is between 0 and `len(s)`).
    """
    raise NotImplementedError
