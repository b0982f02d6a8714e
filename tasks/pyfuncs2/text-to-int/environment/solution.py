def text_to_int(s):
    """The string `s` holds an integer in decimal, maybe with a leading `-`. Return that
    integer.
    """
    raise NotImplementedError
