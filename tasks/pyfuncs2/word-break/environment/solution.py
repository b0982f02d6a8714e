def word_break(s, words):
    """Return `True` if the string `s` can be cut into a sequence of one or more words from
    the list `words` (a word may be used many times); the empty string can always be cut.
    """
    raise NotImplementedError
