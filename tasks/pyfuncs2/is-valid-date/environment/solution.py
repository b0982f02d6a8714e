def is_valid_date(s):
    """Return `True` if the string `s` is a real Gregorian date written exactly as `'YYYY-
    MM-DD'` (four, two and two digits; leap years respected).
    """
    raise NotImplementedError
