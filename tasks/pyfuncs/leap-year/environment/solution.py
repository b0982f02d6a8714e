def is_leap_year(year):
    """Return `True` if `year` is a leap year in the Gregorian calendar: divisible by 4, except
    years divisible by 100, which are leap years only when also divisible by 400.
    """
    raise NotImplementedError
