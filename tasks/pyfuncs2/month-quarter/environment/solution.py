def month_quarter(m):
    """Return the quarter (1-4) of the year that the month number `m` (1-12) falls in:
    months 1-3 are quarter 1, 4-6 quarter 2, 7-9 quarter 3 and 10-12 quarter 4.
    """
    raise NotImplementedError
