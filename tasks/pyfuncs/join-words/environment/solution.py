def join_words(a, b):
    """Return the strings `a` and `b` joined with a single space between them.
    """
    raise NotImplementedError
