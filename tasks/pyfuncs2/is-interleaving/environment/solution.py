def is_interleaving(a, b, c):
    """Return True if the string `c` can be made by interleaving the strings `a` and `b`:
    taking all characters of both, each string's characters in their own order (`'aabcc'`
    and `'dbbca'` can make `'aadbbcbcac'`). The length of `c` must equal the two lengths
    together. Must be fast for strings of a hundred characters.
    """
    raise NotImplementedError
