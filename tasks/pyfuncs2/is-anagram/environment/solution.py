def is_anagram(a, b):
    """Return `True` if `b` is an anagram of `a`: a rearrangement of exactly its characters,
    each used as often, ignoring case (spaces and punctuation count as characters).
    """
    raise NotImplementedError
