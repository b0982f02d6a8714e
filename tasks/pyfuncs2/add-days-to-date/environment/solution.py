def add_days_to_date(date, days):
    """The string `date` is a Gregorian date `'YYYY-MM-DD'`. Return the date `days` days
    later (`days` may be negative or zero) in the same format, across month and year ends
    and leap days (`'2024-02-27'` plus 3 is `'2024-03-01'`).
    """
    raise NotImplementedError
