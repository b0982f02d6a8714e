def day_of_year(year, month, day):
    """Return the day number (1-366) of the date `year`-`month`-`day` within its year, with
    Gregorian leap years.
    """
    raise NotImplementedError
