def longest_vowel_run(s):
    """Return the length of the longest run of consecutive vowels (a, e, i, o, u, either
    case; `y` is not a vowel) in the string `s`, or 0 if it has none.
    """
    raise NotImplementedError
