def numeronym(word):
    """Shorten the string `word` to its first character, the number of characters between
    the first and the last, and its last character (`'internationalization'` gives
    `'i18n'`). A word of fewer than 4 characters is returned unchanged.
    """
    raise NotImplementedError
