def center_pad(s, width, fill):
    """Return the string `s` centered in a field `width` characters wide, padded with the
    one-character string `fill` on both sides. When the padding cannot be split evenly, the
    extra fill character goes on the right. If `s` is at least `width` long, return it
    unchanged.
    """
    raise NotImplementedError
