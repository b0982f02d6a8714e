def parse_dimensions(text):
    """The string `text` gives dimensions as positive whole numbers separated by the letter
    `x` in either case, with optional spaces (`'3x4x5'`, `'10 X 2'`). Return the numbers as
    a list of ints. Return `None` if any part is empty or not a whole number.
    """
    raise NotImplementedError
