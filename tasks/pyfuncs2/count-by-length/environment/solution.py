def count_by_length(s):
    """Return a dict that maps a word length (as a string key, like `'3'`) to how many words
    of the string `s` (split on whitespace) have that length.
    """
    raise NotImplementedError
