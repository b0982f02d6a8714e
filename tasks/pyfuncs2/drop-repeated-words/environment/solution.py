def drop_repeated_words(text):
    """Return the words of the string `text` (split on whitespace) joined by single spaces,
    leaving out any word that equals the word just before it, ignoring case (`'the The cat'`
    gives `'the cat'`: the first spelling is kept).
    """
    raise NotImplementedError
