def wildcard_match(s, pattern):
    """Return `True` if the whole string `s` matches `pattern`, where `?` matches any one
    character, `*` matches any sequence (also empty), and every other character matches
    itself.
    """
    raise NotImplementedError
