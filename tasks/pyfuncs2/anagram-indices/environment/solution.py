def anagram_indices(s, p):
    """Return the sorted list of start indexes `i` where `s[i:i + len(p)]` is an anagram of
    the non-empty string `p` (same letters, same counts).
    """
    raise NotImplementedError
