def same_first_last(s):
    """Return `True` if the non-empty string `s` starts and ends with the same character.
    """
    raise NotImplementedError
