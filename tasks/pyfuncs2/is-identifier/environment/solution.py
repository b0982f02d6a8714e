def is_identifier(s):
    """Return `True` if the string `s` is a valid ASCII Python-style identifier: starts with
    a letter a-z, A-Z or `_`, and continues with letters, digits or `_` (keywords are
    allowed).
    """
    raise NotImplementedError
