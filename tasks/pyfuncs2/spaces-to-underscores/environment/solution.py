def spaces_to_underscores(s):
    """Return the string `s` with every space replaced by an underscore `_`.
    """
    raise NotImplementedError
