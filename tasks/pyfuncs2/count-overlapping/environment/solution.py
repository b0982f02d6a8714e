def count_overlapping(s, sub):
    """Return how many times the non-empty string `sub` occurs in `s`, counting occurrences
    that overlap (`'aa'` occurs twice in `'aaa'`).
    """
    raise NotImplementedError
