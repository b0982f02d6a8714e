def generate_parentheses(n):
    """Return every string of `n` pairs of balanced parentheses, sorted (`'('` before
    `')'`); `['']` for `n` = 0.
    """
    raise NotImplementedError
