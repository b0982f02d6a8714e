def parse_bool(s):
    """Return `True` for the strings `'yes'`, `'y'`, `'true'`, `'1'`, `False` for `'no'`,
    `'n'`, `'false'`, `'0'`, ignoring case and surrounding spaces, and `None` for anything
    else.
    """
    raise NotImplementedError
