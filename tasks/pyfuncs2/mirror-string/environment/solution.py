def mirror_string(s):
    """Return the string `s` followed by its own characters in reverse order, so `'ab'`
    becomes `'abba'` (an empty string stays empty).
    """
    raise NotImplementedError
