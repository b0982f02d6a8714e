def longest_string(words):
    """Return the longest string in the non-empty list `words`; when several have the
    greatest length, the first of them.
    """
    raise NotImplementedError
