def reverse_string(s):
    """Return the string `s` reversed.
    """
    raise NotImplementedError
