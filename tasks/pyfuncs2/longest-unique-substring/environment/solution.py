def longest_unique_substring(s):
    """Return the length of the longest contiguous substring of `s` in which no character
    repeats.
    """
    raise NotImplementedError
