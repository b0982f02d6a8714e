def char_counts(s):
    """Return a dict mapping each character of the string `s` to the number of times it occurs.
    """
    raise NotImplementedError
