def remove_prefix(s, prefix):
    """If the string `s` starts with the string `prefix` (case-sensitive), return `s`
    without it; otherwise return `s` unchanged.
    """
    raise NotImplementedError
