def spell_digits(s):
    """The string `s` holds only the digits 0-9. Return the English word of each digit
    (`'zero'` ... `'nine'`) joined by single spaces (`'12'` gives `'one two'`); `''` for an
    empty string.
    """
    raise NotImplementedError
