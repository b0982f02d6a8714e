def is_vowel(c):
    """Return `True` if the one-character string `c` is a vowel `a`, `e`, `i`, `o` or `u`,
    in either case.
    """
    raise NotImplementedError
