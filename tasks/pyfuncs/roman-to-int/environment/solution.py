def roman_to_int(s):
    """Convert a Roman numeral (upper case, 1 to 3999, using the subtractive forms IV, IX, XL,
    XC, CD, CM) to an integer.
    """
    raise NotImplementedError
