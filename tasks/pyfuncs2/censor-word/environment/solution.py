def censor_word(s, word):
    """Return the string `s` with every occurrence of the non-empty string `word` replaced
    by as many `*` as it has characters.
    """
    raise NotImplementedError
