def squeeze_spaces(s):
    """Return `s` with every run of space characters replaced by a single space and no
    spaces at either end; other whitespace such as tabs is kept as is.
    """
    raise NotImplementedError
