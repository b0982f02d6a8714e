def bigger_string(a, b):
    """Return the longer of the strings `a` and `b`; when they have the same length, return
    `a`.
    """
    raise NotImplementedError
