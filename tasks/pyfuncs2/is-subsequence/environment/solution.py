def is_subsequence(small, big):
    """Return True if the string `small` can be obtained from the string `big` by deleting
    some characters (possibly none) without reordering the rest: `'ace'` is a subsequence of
    `'abcde'`, `'aec'` is not. The empty string is a subsequence of every string.
    """
    raise NotImplementedError
