def date_parts(s):
    """The string `s` is a date `'YYYY-MM-DD'`. Return `[year, month, day]` as integers.
    """
    raise NotImplementedError
