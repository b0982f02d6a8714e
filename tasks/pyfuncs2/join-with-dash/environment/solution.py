def join_with_dash(words):
    """Return the strings of the list `words` joined into one string with `-` between them.
    """
    raise NotImplementedError
