def remove_vowels(s):
    """Return the string `s` without its vowels `a e i o u` in either case; every other
    character stays.
    """
    raise NotImplementedError
