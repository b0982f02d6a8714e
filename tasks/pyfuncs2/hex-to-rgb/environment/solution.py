def hex_to_rgb(color):
    """The string `color` is a colour `'#RRGGBB'` of six hexadecimal digits in either case,
    or the short form `'#RGB'` in which each digit stands for itself doubled (`'#f80'` is
    `'#ff8800'`). Return `[red, green, blue]` as ints 0-255.
    """
    raise NotImplementedError
