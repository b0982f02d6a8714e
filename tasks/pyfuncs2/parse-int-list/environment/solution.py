def parse_int_list(s):
    """The string `s` holds integers separated by commas, maybe with spaces around them
    (`'1, -2,3'`). Return them as a list of ints; an empty string (or one of only spaces)
    gives `[]`.
    """
    raise NotImplementedError
