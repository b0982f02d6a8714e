def count_char(s, ch):
    """Return how many times the single character `ch` occurs in the string `s` (case-
    sensitive).
    """
    raise NotImplementedError
