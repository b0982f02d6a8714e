def count_vowels(s):
    """Return how many vowels (a, e, i, o, u, in upper or lower case) the string `s` contains.
    `y` is not a vowel.
    """
    raise NotImplementedError
