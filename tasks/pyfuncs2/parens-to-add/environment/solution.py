def parens_to_add(s):
    """Return the smallest number of `'('` or `')'` characters that must be inserted into
    the string `s` (made only of round parentheses) to make it balanced: `'())'` needs 1,
    `'((('` needs 3, `')('` needs 2.
    """
    raise NotImplementedError
