def pad_left(s, width, fill):
    """Return the string `s` padded on the left with the character `fill` until it is
    `width` characters long; a string already that long or longer is returned unchanged.
    """
    raise NotImplementedError
