def add_digit_strings(a, b):
    """The strings `a` and `b` are non-negative integers in decimal, possibly very long.
    Return their sum as a decimal string without leading zeros (`'0'` for zero), computed
    digit by digit from the right with carries (inputs may have leading zeros).
    """
    raise NotImplementedError
