def leading_zeros_count(s):
    """Return how many `'0'` characters the string `s` starts with, before its first
    character that is not `'0'` (the whole length if `s` is all zeros, 0 for an empty
    string).
    """
    raise NotImplementedError
