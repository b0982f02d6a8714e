def balanced_parens(s):
    """The string `s` holds only `(` and `)`. Return `True` if they are balanced: every `(`
    is closed by a later `)` and no `)` comes before its `(`; the empty string is balanced.
    """
    raise NotImplementedError
