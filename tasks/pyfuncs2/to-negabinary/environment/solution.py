def to_negabinary(n):
    """Return the integer `n` (any sign) written in base -2 as a string of `0`s and `1`s
    without leading zeros: digit i is worth (-2) ** i, so 2 is `'110'` (4 - 2) and -1 is
    `'11'` (-2 + 1). Zero is `'0'`.
    """
    raise NotImplementedError
