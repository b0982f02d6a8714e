def count_spaces(s):
    """Return how many space characters `' '` the string `s` contains.
    """
    raise NotImplementedError
