def leading_number(s):
    """Return the integer written by the digits 0-9 at the very start of the string `s`
    (`'42abc'` gives 42), or `None` when `s` does not start with a digit.
    """
    raise NotImplementedError
