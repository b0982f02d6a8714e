def longest_palindrome_substring(s):
    """Return the longest contiguous substring of `s` that reads the same backwards; the
    leftmost one on a tie; `''` for an empty string.
    """
    raise NotImplementedError
