def balanced_split(s):
    """The string `s` holds only `L` and `R`. Cut it from left to right into as many pieces
    as possible where each piece has as many `L` as `R`; return how many pieces (0 if `s` is
    empty or can never balance at its end).
    """
    raise NotImplementedError
