def pad_number(n, width):
    """Return the integer `n` as a string padded on the left with zeros to at least `width`
    characters; a negative number keeps its minus sign in front and the sign counts toward
    the width (`-5` at width 3 is `'-05'`). A number already at least `width` characters
    long is returned unpadded.
    """
    raise NotImplementedError
