def lcs_length(a, b):
    """Return the length of the longest common subsequence of the strings `a` and `b`
    (characters in the same order, not necessarily neighbouring).
    """
    raise NotImplementedError
