def vowel_shift(s):
    """Return `s` with each lower-case vowel replaced by the next one in `a e i o u` (and
    `u` by `a`), and each upper-case vowel likewise by the next upper-case vowel; other
    characters stay.
    """
    raise NotImplementedError
