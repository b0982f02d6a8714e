def first_word(s):
    """Return the first word of the string `s`, where words are separated by any whitespace
    (spaces, tabs, newlines, possibly several, possibly leading). Return the empty string if
    `s` has no word.
    """
    raise NotImplementedError
