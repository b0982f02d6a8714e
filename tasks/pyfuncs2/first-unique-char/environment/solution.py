def first_unique_char(s):
    """Return the index of the first character of the string `s` that occurs only once in
    `s` (case-sensitive), or `-1` when every character repeats (also for an empty string).
    """
    raise NotImplementedError
