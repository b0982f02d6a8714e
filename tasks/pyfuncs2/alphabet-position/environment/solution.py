def alphabet_position(c):
    """Return the position in the alphabet of the lower-case letter `c`: 1 for `a`, 2 for
    `b`, up to 26 for `z`.
    """
    raise NotImplementedError
