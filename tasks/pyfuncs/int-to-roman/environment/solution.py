def int_to_roman(n):
    """Convert an integer `n` (1 to 3999) to an upper-case Roman numeral, using the subtractive
    forms IV, IX, XL, XC, CD and CM.
    """
    raise NotImplementedError
