def repeat_to_length(s, n):
    """Return the non-empty string `s` repeated as often as needed and cut so that the
    result has exactly `n` characters (`n >= 0`): `('abc', 7)` gives `'abcabca'`, and `n =
    0` gives the empty string.
    """
    raise NotImplementedError
