def sort_by_length(words):
    """Return the strings of `words` sorted from shortest to longest; strings of the same
    length are ordered alphabetically (plain string comparison).
    """
    raise NotImplementedError
