def is_anagram(a, b):
    """Return `True` if `a` and `b` are anagrams of each other, ignoring case and spaces; else
    `False`.
    """
    raise NotImplementedError
