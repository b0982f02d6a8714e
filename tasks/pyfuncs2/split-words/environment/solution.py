def split_words(s):
    """Return the list of words of the string `s`, split on runs of whitespace.
    """
    raise NotImplementedError
