def capitalize_first(s):
    """Return the string `s` with its first character in upper case and the rest unchanged.
    """
    raise NotImplementedError
