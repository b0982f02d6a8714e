def a_or_an(word):
    """Return the non-empty word `word` preceded by its indefinite article and a space:
    `'an'` if the word starts with a vowel letter (a, e, i, o, u, either case), otherwise
    `'a'` (`'an apple'`, `'a pear'`, `'an Owl'`). Go by the first letter only.
    """
    raise NotImplementedError
