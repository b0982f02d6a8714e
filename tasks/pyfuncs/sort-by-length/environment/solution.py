def sort_by_length(words):
    """Return the strings of `words` sorted by length, shortest first; strings of equal length
    keep their original order.
    """
    raise NotImplementedError
