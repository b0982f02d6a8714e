def sorted_letters(s):
    """Return a string made of the characters of `s` sorted by their Unicode code point (so
    upper-case letters come before lower-case ones).
    """
    raise NotImplementedError
