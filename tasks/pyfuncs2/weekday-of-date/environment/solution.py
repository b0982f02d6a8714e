def weekday_of_date(year, month, day):
    """Return the English weekday name (`'Monday'` ... `'Sunday'`) of the Gregorian date
    `year`, `month`, `day` (a valid date with year >= 1). January 1, 2000 was a Saturday.
    """
    raise NotImplementedError
