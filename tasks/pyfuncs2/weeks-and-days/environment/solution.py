def weeks_and_days(days):
    """Split a number of days `days` (a non-negative integer) into whole weeks and the days
    left over; return them as a list `[weeks, days_left]` with `0 <= days_left < 7`.
    """
    raise NotImplementedError
