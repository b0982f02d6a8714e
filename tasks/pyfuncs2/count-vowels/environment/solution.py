def count_vowels(s):
    """Return how many characters of the string `s` are vowels `a e i o u`, in either case
    (`y` is not a vowel).
    """
    raise NotImplementedError
