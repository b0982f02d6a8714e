def ascii_sum(s):
    """Return the sum of the Unicode code points of the characters of `s` (0 for an empty
    string).
    """
    raise NotImplementedError
