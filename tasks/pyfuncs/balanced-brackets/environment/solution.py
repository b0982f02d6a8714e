def is_balanced(s):
    """Return `True` if every bracket in the string `s` — `()`, `[]` and `{}` — is closed by
    the matching bracket in the right order; other characters are ignored. Else return
    `False`.
    """
    raise NotImplementedError
