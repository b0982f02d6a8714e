def last_word(s):
    """Return the last word of the string `s`, where words are runs of non-whitespace
    characters (trailing spaces and newlines are not words). Return the empty string if `s`
    has no word.
    """
    raise NotImplementedError
