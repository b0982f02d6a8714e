def multiply_digit_strings(a, b):
    """The strings `a` and `b` are non-negative integers in decimal without leading zeros
    (or `'0'`), possibly hundreds of digits long. Return their product as a decimal string
    without leading zeros, computing it digit by digit as on paper (the result for a zero
    factor is `'0'`).
    """
    raise NotImplementedError
