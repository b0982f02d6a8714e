def strip_comments(text):
    """Return the lines of the string `text` (split with `splitlines`) that are not
    comments, as a list: a comment line starts with `#` after optional leading spaces.
    """
    raise NotImplementedError
