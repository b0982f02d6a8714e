def ends_with_punctuation(s):
    """Return True if the string `s`, after removing trailing whitespace, ends with one of
    the sentence-ending marks `.`, `!` or `?`; return False otherwise (also for an empty or
    all-blank string).
    """
    raise NotImplementedError
