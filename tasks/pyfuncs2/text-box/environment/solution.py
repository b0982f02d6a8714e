def text_box(s):
    """Return the string `s` (one line) drawn in a box of three lines joined by newlines: a
    top and bottom border `'+'`, dashes, `'+'`, and a middle line `'| ' + s + ' |'`; the
    borders have as many dashes as `s` has characters plus two. Example: `'hi'` gives
    `'+----+\n| hi |\n+----+'`.
    """
    raise NotImplementedError
