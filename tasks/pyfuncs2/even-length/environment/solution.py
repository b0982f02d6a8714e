def even_length(s):
    """Return `True` if the string `s` has an even number of characters (0 is even).
    """
    raise NotImplementedError
