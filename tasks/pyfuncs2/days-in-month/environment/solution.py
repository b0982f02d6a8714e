def days_in_month(month, year):
    """Return the number of days of month `month` (1-12) of year `year`, with leap years in
    the Gregorian calendar (divisible by 4, except centuries not divisible by 400).
    """
    raise NotImplementedError
