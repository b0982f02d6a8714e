def roman_valid(s):
    """Return `True` if `s` is a Roman numeral in standard form for a number from 1 to 3999:
    at most three `M`, then hundreds, tens and units each written as one of the canonical
    forms (`C CC CCC CD D DC DCC DCCC CM`, likewise with X/L/C and I/V/X), upper case.
    """
    raise NotImplementedError
