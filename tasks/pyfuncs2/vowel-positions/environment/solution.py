def vowel_positions(s):
    """Return the list of indexes of the characters of `s` that are vowels `a e i o u` in
    either case.
    """
    raise NotImplementedError
