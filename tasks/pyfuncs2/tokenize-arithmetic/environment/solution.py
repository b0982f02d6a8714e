def tokenize_arithmetic(s):
    """Split the arithmetic expression `s` into tokens: integers (as ints), and the single
    characters `+ - * / ( )` (as strings); spaces are skipped. Return the list of tokens.
    """
    raise NotImplementedError
