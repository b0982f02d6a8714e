def is_repeated_pattern(s):
    """Return True if the string `s` is two or more copies of one shorter string joined
    together (`'abab'` is `'ab'` twice, `'aaa'` is `'a'` three times). A string of length 0
    or 1 gives False.
    """
    raise NotImplementedError
