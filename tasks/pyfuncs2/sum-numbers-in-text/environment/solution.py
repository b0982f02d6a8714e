def sum_numbers_in_text(s):
    """Return the sum of the whole numbers written in the string `s`, where a number is a
    maximal run of digits 0-9 (`'a12b3'` holds 12 and 3; signs and dots are not part of
    numbers).
    """
    raise NotImplementedError
