def replace_first(s, old, new):
    """Return the string `s` with only the first occurrence of the non-empty substring `old`
    replaced by `new`; later occurrences stay. If `old` does not occur, return `s`
    unchanged.
    """
    raise NotImplementedError
