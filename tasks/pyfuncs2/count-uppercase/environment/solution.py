def count_uppercase(s):
    """Return how many characters of the string `s` are upper-case letters.
    """
    raise NotImplementedError
