def count_leap_years(start, end):
    """Return how many years from `start` to `end`, both included, are leap years in the
    Gregorian calendar (divisible by 4, except centuries not divisible by 400). Return 0 if
    `start > end`.
    """
    raise NotImplementedError
