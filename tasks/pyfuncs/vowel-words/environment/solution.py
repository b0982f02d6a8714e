def vowel_words(words):
    """Return the strings of `words` that start with a vowel (a, e, i, o, u in either case), in
    their order. Empty strings are skipped.
    """
    raise NotImplementedError
