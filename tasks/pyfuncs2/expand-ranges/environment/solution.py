def expand_ranges(s):
    """The string `s` lists integers and inclusive ranges separated by commas, like
    `'1-3,5'`. Return every number in order as a list (`[1, 2, 3, 5]`); spaces around pieces
    are allowed; an empty string gives `[]`.
    """
    raise NotImplementedError
